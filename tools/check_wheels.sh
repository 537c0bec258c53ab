#!/usr/bin/env bash
# Install each defrag wheel of a directory into a fresh virtual environment of its own Python,
# where no compiler can be reached, and run it from a directory outside the checkout:
#
#   tools/check_wheels.sh [--python 3.X]... [--no-fingerprint] [--forests DIR] WHEELDIR
#   (also: tools/build_wheel.sh --check [--python 3.X]... WHEELDIR)
#
# For each wheel (those of the given Pythons, else all in WHEELDIR):
#   1. a new venv of that wheel's CPython, with the run-time dependencies and pytest as binary
#      wheels, at the versions pinned in tools/wheel-check-constraints.txt (the same for every
#      Python and platform, so that the results can be compared). The CPython, by the wheel's
#      platform tag (tools/wheel_targets.sh makes the foreign ones):
#        x86_64 manylinux   python3.X on PATH, else pyenv's;
#        aarch64 manylinux  Debian's arm64 CPython 3.X (3.11: bookworm, 3.13: trixie) in a root
#                           of its own, run by qemu-user (the venv's python is a script that
#                           starts it under qemu with that root's libraries);
#        x86_64 musllinux   the CPython built against musl, run by musl 1.2.5's loader.
#      For the foreign ones, the host's pip installs the dependencies into the venv (for that
#      platform: --platform, --only-binary) and the venv's own pip, run on the target, installs
#      defrag, so that its tag is judged by the target's pip. scikit-learn has no musllinux
#      wheel: for musl it comes from its sdist, built once by zig's clang (tools/wheel_targets.sh);
#   2. with PATH holding only the venv's bin/ and CC, CXX set to /bin/false (a compiler found
#      is an error): defrag installed from the wheel file with --no-index --only-binary, checked
#      to be imported from the venv; `python -m defrag config`, `python -m defrag demo`, and the
#      installed-package test selection (TESTS below, copied out of tests/);
#   3. benchmarks/fingerprint.py --presets default (copied out with benchmarks/run.py, forests
#      fitted afresh in each venv): one line per case with hashes of the fitted parameters,
#      the printed rules and the predictions.
# The fingerprints must be identical across the wheels, whatever their CPU or C library; they are
# printed, and left with the other logs in $CHECK_LOGS when that is set. The three benchmark
# forests of fingerprint.py are fitted once, by the first wheel checked, and read from that cache
# by the others (scikit-learn's pickles, one version everywhere): the same forests everywhere, and
# under qemu, where a fit takes some 20 times longer, half the fingerprint's time saved. The
# other cases' models are fitted afresh in each environment. --forests DIR keeps that cache in
# DIR (default: a temporary directory), so that several runs share it: the first one to reach
# the fingerprint fits the forests, the others read them (run that first one alone: the cache
# files are written in place).
set -euo pipefail

TESTS=(conftest.py reference.py test_import.py test_kernels.py test_rules.py)

root="$(cd "$(dirname "$0")/.." && pwd)"
die() { echo "check_wheels: $*" >&2; exit 1; }
# shellcheck source=tools/wheel_lib.sh
source "$root/tools/wheel_lib.sh"
# shellcheck source=tools/wheel_targets.sh
source "$root/tools/wheel_targets.sh"

pythons=()
fingerprint=1
forests=""
dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --python) [ $# -ge 2 ] || die "--python needs a version (3.X)"; pythons+=("$2"); shift 2 ;;
    --python=*) pythons+=("${1#--python=}"); shift ;;
    --no-fingerprint) fingerprint=0; shift ;;
    --forests) [ $# -ge 2 ] || die "--forests needs a directory"; forests="$(realpath -m "$2")"; shift 2 ;;
    --forests=*) forests="$(realpath -m "${1#--forests=}")"; shift ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) [ -z "$dir" ] || die "one WHEELDIR only"; dir="$1"; shift ;;
  esac
done
[ -n "$dir" ] || die "usage: tools/check_wheels.sh [--python 3.X]... [--no-fingerprint] [--forests DIR] WHEELDIR"
dir="$(realpath "$dir")"

wheels=()
if [ "${#pythons[@]}" -gt 0 ]; then
  for v in "${pythons[@]}"; do
    tag="cp${v/./}"
    found=("$dir"/defrag-*-"$tag"-"$tag"-*.whl)
    [ -f "${found[0]}" ] || die "no $tag wheel in $dir"
    wheels+=("${found[@]}")   # one per platform
  done
else
  for w in "$dir"/defrag-*.whl; do [ -f "$w" ] && wheels+=("$w"); done
fi
# the native ones (x86_64 manylinux) first: the first wheel checked fits the shared forests
native=(); foreign=()
for w in "${wheels[@]}"; do
  case "$(basename "$w")" in *manylinux*_x86_64*) native+=("$w") ;; *) foreign+=("$w") ;; esac
done
wheels=("${native[@]}" "${foreign[@]}")
[ "${#wheels[@]}" -gt 0 ] || die "no defrag wheel in $dir"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
logs="${CHECK_LOGS:-$tmp/logs}"
forests="${forests:-$tmp/forests}"
mkdir -p "$logs"
start=$SECONDS
tags=()

deps=(numpy scikit-learn threadpoolctl pytest pandas)
for wheel in "${wheels[@]}"; do
  t0=$SECONDS
  name="$(basename "$wheel")"
  tag="$(echo "$name" | cut -d- -f3)"                 # cp312
  plat="$(basename "$name" .whl | cut -d- -f5)"; plat="${plat%%.*}"   # manylinux2014_aarch64
  v="${tag#cp}"; v="${v:0:1}.${v:1}"                   # 3.12
  arch="$(plat_arch "$plat")" && libc="$(plat_libc "$plat")" || die "$name: platform $plat unknown here"
  id="$tag-$arch-$libc"                               # cp312-x86_64-glibc: logs and fingerprints
  w="$tmp/$id"
  mkdir -p "$w/run"
  case "$arch-$libc" in
    x86_64-glibc)
      py="$(find_python "$v")" || die "$name: no Python $v found (python$v on PATH or in pyenv)"
      "$py" -m venv "$w/venv"
      "$w/venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
        -c "$root/tools/wheel-check-constraints.txt" "${deps[@]}" ;;
    aarch64-glibc)
      target="$(aarch64_root "$v")"
      py="$target/usr/bin/python$v"
      aarch64_venv "$target" "$v" "$w/venv"
      host_pip_into "$w/venv" "$plat" "$v" -c "$root/tools/wheel-check-constraints.txt" pip "${deps[@]}" ;;
    x86_64-musl)
      py="$(musl_python)"
      [ "$v" = "$MUSL_PYTHON_SERIES" ] || die "$name: the musl CPython is $MUSL_PYTHON_SERIES only"
      sklearn_dir="$(musl_sklearn_wheels)"
      "$py" -m venv --without-pip "$w/venv"
      # scikit-learn's wheel built here is tagged linux_x86_64 (no auditwheel run on it)
      host_pip_into "$w/venv" "$plat" "$v" -c "$root/tools/wheel-check-constraints.txt" \
        --find-links "$sklearn_dir" --platform linux_x86_64 pip "${deps[@]}" ;;
    *) die "$name: no way to check $arch $libc here" ;;
  esac
  echo "check_wheels: $name with $("$w/venv/bin/python" -c 'import sys, sysconfig; print(sys.version.split()[0], sysconfig.get_config_var("SOABI"))') ($py)"
  for t in "${TESTS[@]}"; do cp "$root/tests/$t" "$w/run/"; done
  cp "$root/benchmarks/fingerprint.py" "$root/benchmarks/run.py" "$w/run/"
  (
    cd "$w/run"
    export PATH="$w/venv/bin" CC=/bin/false CXX=/bin/false
    # byte code written as a user's would be (under qemu, each start would otherwise compile
    # every module it imports again)
    unset PYTHONPATH PYTHONDONTWRITEBYTECODE
    # timed VERB CMD...: runs CMD and prints how long it took
    timed() { local t1=$SECONDS what="$1"; shift; "$@" || return; echo "check_wheels: $what took $((SECONDS - t1)) s"; }
    if command -v gcc || command -v cc || command -v c++ || command -v clang; then
      echo "check_wheels: a compiler is reachable in the wheel environment" >&2; exit 1
    fi
    # the wheel file itself (several platforms' wheels may share the directory): pip refuses one
    # whose tags this interpreter does not support
    timed "pip install of the wheel" python -m pip install --quiet --disable-pip-version-check --no-index --only-binary=:all: "$wheel"
    python -c "import defrag, sys; print('check_wheels: defrag imported from', defrag.__file__); sys.exit(0 if defrag.__file__.startswith('$w/venv/') else 1)"
    python -m defrag config
    timed "the demo" python -m defrag demo
    timed "the test selection" python -m pytest -q -rs -p no:cacheprovider .
    if [ "$fingerprint" = 1 ]; then
      # its standard error to a file: joblib runs `cat` and `lscpu` to count the physical
      # cores, which are not on this PATH, and prints a warning with a traceback there
      t1=$SECONDS
      python fingerprint.py --presets default --cache "$forests" \
        > "$logs/fingerprint-$id.txt" 2> "$logs/fingerprint-$id.stderr" || {
        python -c "import sys; sys.stdout.write(open(sys.argv[1]).read())" "$logs/fingerprint-$id.stderr"
        exit 1; }
      echo "check_wheels: the fingerprint took $((SECONDS - t1)) s"
    fi
  ) 2>&1 | tee "$logs/check-$id.log" | sed "s/^/$id: /" || die "$name failed (log above)"
  if [ "$fingerprint" = 1 ]; then sed "s/^/$id: fingerprint: /" "$logs/fingerprint-$id.txt"; fi
  echo "check_wheels: $name passed in $((SECONDS - t0)) s"
  tags+=("$id")
done

if [ "$fingerprint" = 1 ]; then
  first="${tags[0]}"
  for tag in "${tags[@]:1}"; do
    if ! diff -u "$logs/fingerprint-$first.txt" "$logs/fingerprint-$tag.txt"; then
      die "the fingerprints of $first and $tag differ"
    fi
  done
  echo "check_wheels: fingerprints (default preset, $(wc -l < "$logs/fingerprint-$first.txt") cases) identical across ${tags[*]}"
fi
echo "check_wheels: ${#tags[@]} wheel(s) passed in $((SECONDS - start)) s"
