#!/usr/bin/env bash
# Make, ahead of tools/build_wheel.sh and tools/check_wheels.sh, what they need for the other
# platforms (tools/wheel_targets.sh; kept under ~/.cache/defrag-wheel-toolchains, or
# DEFRAG_TOOLCHAINS), so that it can run beside other work (CI starts it in the background):
#
#   tools/wheel_toolchains.sh manylinux2014_aarch64:3.11 musllinux_1_2_x86_64:3.11
#
# aarch64: the Debian packages (cross GCC, qemu-user-static, mmdebstrap), Debian's arm64 root
# with CPython 3.X (tools/check_wheels.sh registers qemu with binfmt_misc for its own run only).
# musl: the musl tools, the musl CPython and scikit-learn's wheel for it (the longest; times in
# docs/install.rst).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
die() { echo "wheel_toolchains: $*" >&2; exit 1; }
# shellcheck source=tools/wheel_lib.sh
source "$root/tools/wheel_lib.sh"
# shellcheck source=tools/wheel_targets.sh
source "$root/tools/wheel_targets.sh"

[ $# -gt 0 ] || die "usage: tools/wheel_toolchains.sh PLATFORM:3.X..."
for target in "$@"; do
  plat="${target%%:*}"; v="${target#*:}"
  t0=$SECONDS
  case "$(plat_arch "$plat" || true)-$(plat_libc "$plat" || true)" in
    aarch64-glibc)
      need_debs gcc-aarch64-linux-gnu qemu-user-static mmdebstrap
      aarch64_root "$v" > /dev/null ;;
    x86_64-musl)
      [ "$v" = "$MUSL_PYTHON_SERIES" ] || die "$target: the musl CPython is $MUSL_PYTHON_SERIES only"
      musl_python > /dev/null
      musl_sklearn_wheels > /dev/null ;;
    x86_64-glibc) ;;
    *) die "$target: unknown platform" ;;
  esac
  echo "wheel_toolchains: $target ready in $((SECONDS - t0)) s ($TOOLCHAINS)"
done
