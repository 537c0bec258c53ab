#!/usr/bin/env bash
# Install each defrag wheel of a directory into a fresh virtual environment of its own Python,
# where no compiler can be reached, and run it from a directory outside the checkout:
#
#   tools/check_wheels.sh [--python 3.X]... [--no-fingerprint] WHEELDIR
#   (also: tools/build_wheel.sh --check [--python 3.X]... WHEELDIR)
#
# For each wheel (those of the given Pythons, else all in WHEELDIR):
#   1. a new venv of that wheel's CPython (python3.X on PATH, else pyenv's), with the run-time
#      dependencies and pytest as binary wheels, at the versions pinned in
#      tools/wheel-check-constraints.txt (the same for every Python, so that the results can be
#      compared);
#   2. with PATH holding only the venv's bin/ and CC, CXX set to /bin/false (a compiler found
#      is an error): defrag installed with --no-index --only-binary from WHEELDIR, checked to
#      be imported from the venv; `python -m defrag config`, `python -m defrag demo`, and the
#      installed-package test selection (TESTS below, copied out of tests/);
#   3. benchmarks/fingerprint.py --presets default (copied out with benchmarks/run.py, forests
#      fitted afresh in each venv): one line per case with hashes of the fitted parameters,
#      the printed rules and the predictions.
# The fingerprints must be identical across the wheels; they are printed, and left with the
# other logs in $CHECK_LOGS when that is set.
set -euo pipefail

TESTS=(conftest.py reference.py test_import.py test_kernels.py test_rules.py)

root="$(cd "$(dirname "$0")/.." && pwd)"
die() { echo "check_wheels: $*" >&2; exit 1; }
# shellcheck source=tools/wheel_lib.sh
source "$root/tools/wheel_lib.sh"

pythons=()
fingerprint=1
dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --python) [ $# -ge 2 ] || die "--python needs a version (3.X)"; pythons+=("$2"); shift 2 ;;
    --python=*) pythons+=("${1#--python=}"); shift ;;
    --no-fingerprint) fingerprint=0; shift ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) [ -z "$dir" ] || die "one WHEELDIR only"; dir="$1"; shift ;;
  esac
done
[ -n "$dir" ] || die "usage: tools/check_wheels.sh [--python 3.X]... [--no-fingerprint] WHEELDIR"
dir="$(realpath "$dir")"

wheels=()
if [ "${#pythons[@]}" -gt 0 ]; then
  for v in "${pythons[@]}"; do
    tag="cp${v/./}"
    found=("$dir"/defrag-*-"$tag"-"$tag"-*.whl)
    [ -f "${found[0]}" ] || die "no $tag wheel in $dir"
    [ "${#found[@]}" -eq 1 ] || die "more than one $tag wheel in $dir: ${found[*]}"
    wheels+=("${found[0]}")
  done
else
  for w in "$dir"/defrag-*.whl; do [ -f "$w" ] && wheels+=("$w"); done
fi
[ "${#wheels[@]}" -gt 0 ] || die "no defrag wheel in $dir"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
logs="${CHECK_LOGS:-$tmp/logs}"
mkdir -p "$logs"
start=$SECONDS
tags=()

for wheel in "${wheels[@]}"; do
  t0=$SECONDS
  name="$(basename "$wheel")"
  version="$(echo "$name" | cut -d- -f2)"             # 0.1.0
  tag="$(echo "$name" | cut -d- -f3)"                 # cp312
  v="${tag#cp}"; v="${v:0:1}.${v:1}"                   # 3.12
  py="$(find_python "$v")" || die "$name: no Python $v found (python$v on PATH or in pyenv)"
  echo "check_wheels: $name with $("$py" -c 'import sys; print(sys.version.split()[0])') ($py)"
  w="$tmp/$tag"
  mkdir -p "$w/run"
  "$py" -m venv "$w/venv"
  "$w/venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
    -c "$root/tools/wheel-check-constraints.txt" numpy scikit-learn threadpoolctl pytest pandas
  for t in "${TESTS[@]}"; do cp "$root/tests/$t" "$w/run/"; done
  cp "$root/benchmarks/fingerprint.py" "$root/benchmarks/run.py" "$w/run/"
  (
    cd "$w/run"
    export PATH="$w/venv/bin" CC=/bin/false CXX=/bin/false
    unset PYTHONPATH
    if command -v gcc || command -v cc || command -v c++ || command -v clang; then
      echo "check_wheels: a compiler is reachable in the wheel environment" >&2; exit 1
    fi
    python -m pip install --quiet --disable-pip-version-check --no-index --only-binary=:all: \
      --find-links "$dir" "defrag==$version"
    python -c "import defrag, sys; print('check_wheels: defrag imported from', defrag.__file__); sys.exit(0 if defrag.__file__.startswith('$w/venv/') else 1)"
    python -m defrag config
    python -m defrag demo
    python -m pytest -q -p no:cacheprovider .
    if [ "$fingerprint" = 1 ]; then
      # its standard error to a file: joblib runs `cat` and `lscpu` to count the physical
      # cores, which are not on this PATH, and prints a warning with a traceback there
      python fingerprint.py --presets default --cache "$w/cache" \
        > "$logs/fingerprint-$tag.txt" 2> "$logs/fingerprint-$tag.stderr" || {
        python -c "import sys; sys.stdout.write(open(sys.argv[1]).read())" "$logs/fingerprint-$tag.stderr"
        exit 1; }
    fi
  ) 2>&1 | tee "$logs/check-$tag.log" | sed "s/^/$tag: /" || die "$name failed (log above)"
  if [ "$fingerprint" = 1 ]; then sed "s/^/$tag: fingerprint: /" "$logs/fingerprint-$tag.txt"; fi
  echo "check_wheels: $name passed in $((SECONDS - t0)) s"
  tags+=("$tag")
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
