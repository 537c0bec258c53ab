#!/usr/bin/env bash
# Make, ahead of tools/build_wheel.sh and tools/check_wheels.sh, what they need for the other
# platforms (tools/wheel_targets.sh; kept under ~/.cache/defrag-wheel-toolchains, or
# DEFRAG_TOOLCHAINS), so that it can run beside other work (CI starts it in the background):
#
#   tools/wheel_toolchains.sh [--debs-only] manylinux2014_aarch64:3.11 musllinux_1_2_x86_64:3.11
#
# First the Debian packages of every target named (tools/wheel_targets.sh, debs_for), in one
# apt-get run, then for each target:
# aarch64: Debian's arm64 root with CPython 3.X (its stdlib byte-compiled by the host's 3.X).
# musl: the musl tools, the musl CPython and scikit-learn's wheel for it (the longest; times in
# docs/install.rst).
# Each step's time is printed. --debs-only: the Debian packages only (CI installs them first, in
# one apt run, then makes each target's toolchain in a background job of its own).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
die() { echo "wheel_toolchains: $*" >&2; exit 1; }
# shellcheck source=tools/wheel_lib.sh
source "$root/tools/wheel_lib.sh"
# shellcheck source=tools/wheel_targets.sh
source "$root/tools/wheel_targets.sh"

debs_only=0
if [ "${1:-}" = --debs-only ]; then debs_only=1; shift; fi
[ $# -gt 0 ] || die "usage: tools/wheel_toolchains.sh [--debs-only] PLATFORM:3.X..."
debs=()
for target in "$@"; do
  plat="${target%%:*}"
  list="$(debs_for "$(plat_arch "$plat" || true)-$(plat_libc "$plat" || true)")" \
    || die "$target: unknown platform"
  read -ra more <<< "$list"
  debs+=("${more[@]}")
done
t0=$SECONDS
if [ "${#debs[@]}" -gt 0 ]; then need_debs "${debs[@]}"; fi
echo "wheel_toolchains: Debian packages ready in $((SECONDS - t0)) s"
[ "$debs_only" = 0 ] || exit 0
for target in "$@"; do
  plat="${target%%:*}"; v="${target#*:}"
  t0=$SECONDS
  case "$(plat_arch "$plat" || true)-$(plat_libc "$plat" || true)" in
    aarch64-glibc)
      aarch64_root "$v" > /dev/null ;;
    x86_64-musl)
      [ "$v" = "$MUSL_PYTHON_SERIES" ] || die "$target: the musl CPython is $MUSL_PYTHON_SERIES only"
      t1=$SECONDS
      musl_python > /dev/null
      echo "wheel_toolchains: $target: the musl CPython ready in $((SECONDS - t1)) s"
      musl_sklearn_wheels > /dev/null ;;
    x86_64-glibc) ;;
    *) die "$target: unknown platform" ;;
  esac
  echo "wheel_toolchains: $target ready in $((SECONDS - t0)) s ($TOOLCHAINS)"
done
