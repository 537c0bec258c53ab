#!/usr/bin/env bash
# Run the whole test suite against a build of defrag's extension instrumented with
# AddressSanitizer and UndefinedBehaviorSanitizer; any sanitizer report fails it.
#
#   tools/sanitize.sh [PYTEST ARGS...]     (default: the whole suite, tests/)
#
# Steps: a throw-away virtual environment with the test dependencies from the index (a
# local PyPI mirror works); a copy of the committed sources (`git archive HEAD`, so the
# working tree's own in-place build is untouched); an in-place build there with
# -fsanitize=address,undefined; pytest with the sanitizer runtimes preloaded (CPython itself
# is not instrumented, so libasan must be loaded first, before the interpreter's malloc is
# used). The output is also searched for sanitizer reports, in case one did not stop the run
# (a report from a subprocess, say): any "runtime error:" or "ERROR: AddressSanitizer" fails.
#
# Environment: PYTHON (default python3), CC (default gcc), SANITIZE_LOG (a file to keep
# the pytest output in; by default it is deleted with the temporary directory).
#
# Decisions:
# - detect_leaks=0: CPython's allocator keeps its arenas and interned objects until exit
#   and never frees some of them at all (by design), so LeakSanitizer would report every
#   run; the extension's own leaks are not what this checks.
# - DEFRAG_NO_OPENMP=1 checks the build without OpenMP (otherwise OpenMP is required).
# - setup.py appends -O3 after $CFLAGS, so the kernels are checked at the optimisation
#   level they ship with; -fno-omit-frame-pointer and -g keep the stack traces readable.
# - Tests deselected below, each with its reason: none need to be so far.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
cc="${CC:-gcc}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

libasan="$("$cc" -print-file-name=libasan.so)"
libubsan="$("$cc" -print-file-name=libubsan.so)"
for lib in "$libasan" "$libubsan"; do
  if [ ! -e "$lib" ]; then
    echo "sanitize: $cc has no $(basename "$lib") (install the compiler's sanitizer runtimes)" >&2
    exit 1
  fi
done

"$python" -m venv "$tmp/venv"
py="$tmp/venv/bin/python"
"$py" -m pip install --quiet --disable-pip-version-check \
  numpy scikit-learn threadpoolctl pytest pandas hypothesis xgboost-cpu lightgbm matplotlib \
  Cython "setuptools>=77"

mkdir "$tmp/src"
git -C "$root" archive HEAD | tar -x -C "$tmp/src"

# -fsanitize goes into CC as well: setup.py's OpenMP probe links a program with the
# compiler's linker_exe, which is CC without LDFLAGS; without it the probe fails and the
# kernels would be checked without OpenMP.
(
  cd "$tmp/src"
  CC="$cc -fsanitize=address,undefined" \
  CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -O1 -g" \
  LDFLAGS="-fsanitize=address,undefined" \
    "$py" setup.py build_ext --inplace -q > "$tmp/build.log" 2>&1
) || { cat "$tmp/build.log" >&2; echo "sanitize: the build failed" >&2; exit 1; }
if [ -z "${DEFRAG_NO_OPENMP:-}" ] && ! grep -q '^defrag: building with OpenMP: yes' "$tmp/build.log"; then
  echo "sanitize: the instrumented build has no OpenMP (the probe failed):" >&2
  grep -E '^defrag: building with OpenMP' "$tmp/build.log" >&2 || true
  exit 1
fi

# Every extension module must actually be instrumented (a stale object would not be); a
# module may hold nothing UBSan checks (_common), so its hooks are required in the kernels'.
# The modules lie beside their sources in the rooms they serve (defrag/*/_*.pyx, and
# defrag/_testing.pyx at the top): each .pyx must have its built module.
built=()
while IFS= read -r pyx; do
  so=("${pyx%.pyx}".*.so)
  if [ ! -e "${so[0]}" ]; then
    echo "sanitize: ${pyx#"$tmp"/src/} has no built module beside it" >&2; exit 1
  fi
  built+=("${so[0]}")
done < <(find "$tmp/src/defrag" -name '_*.pyx' | sort)
for so in "${built[@]}"; do
  # (the symbol list is read whole: grep -q would stop early, nm would die of SIGPIPE and,
  # with pipefail, a match would read as a failure)
  if ! grep -q '__asan_' <<< "$(nm -D --undefined-only "$so")"; then
    echo "sanitize: ${so#"$tmp"/src/} is not built with AddressSanitizer" >&2; exit 1
  fi
done
fit_so=("$tmp"/src/defrag/fit/_fit.*.so)
if [ ! -e "${fit_so[0]}" ] || ! grep -q '__ubsan_' <<< "$(nm -D --undefined-only "${fit_so[0]}")"; then
  echo "sanitize: defrag/fit/_fit is not built with UndefinedBehaviorSanitizer" >&2; exit 1
fi

deselect=()
if [ "$#" -eq 0 ]; then set -- tests; fi

log="$tmp/pytest.log"
start=$SECONDS
set +e
(
  cd "$tmp/src"
  LD_PRELOAD="$libasan $libubsan" \
  ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    "$py" -m pytest -q -p no:cacheprovider "${deselect[@]}" "$@"
) > "$log" 2>&1
rc=$?
set -e
elapsed=$((SECONDS - start))
if [ -n "${SANITIZE_LOG:-}" ]; then cp "$log" "$SANITIZE_LOG"; fi

tail -n 25 "$log"
reports="$(grep -c -E 'runtime error:|ERROR: AddressSanitizer' "$log" || true)"
if [ "$reports" != "0" ]; then
  echo "sanitize: FAILED: $reports sanitizer report line(s):" >&2
  grep -n -A 12 -E 'runtime error:|ERROR: AddressSanitizer' "$log" | head -n 200 >&2
  exit 1
fi
if [ "$rc" -ne 0 ]; then
  echo "sanitize: FAILED: pytest exited with $rc (${elapsed}s)" >&2
  exit "$rc"
fi
echo "sanitize: passed, no sanitizer reports (${elapsed}s of tests)"
