# Shell functions for the wheels of the other platforms (sourced by tools/build_wheel.sh and
# tools/check_wheels.sh, after tools/wheel_lib.sh; `die` is the caller's). All is built on this
# x86_64 Debian machine, from Debian's and PyPI's packages:
#
#   manylinux aarch64   compiled by Debian's cross GCC (gcc-aarch64-linux-gnu) against the
#                       headers and sysconfig data of a Debian arm64 CPython, extracted with
#                       mmdebstrap into a root of its own (3.11 from bookworm, 3.13 from trixie;
#                       Debian has no arm64 3.10 or 3.12); that root's interpreter runs the
#                       check under qemu-user (qemu-user-static; aarch64_venv).
#   musllinux x86_64    a CPython built from Debian's source (python3.11 3.11.2) by musl-gcc
#                       (musl-tools), with zlib and libffi from Debian's sources and no optional
#                       module that needs another library; it runs on trixie's musl 1.2.5 (numpy's
#                       and scipy's musllinux wheels need musl >= 1.2.4: their libraries use
#                       DT_RELR relocations, which bookworm's musl 1.2.3 does not read).
#
# Everything goes under $TOOLCHAINS (DEFRAG_TOOLCHAINS, default ~/.cache/defrag-wheel-toolchains),
# each piece in a directory of its own named after what it holds, made in a temporary directory
# and moved into place when complete: a second run reuses them. Missing Debian packages are
# installed when running as root (CI), else the run stops naming them.

TOOLCHAINS="${DEFRAG_TOOLCHAINS:-${XDG_CACHE_HOME:-$HOME/.cache}/defrag-wheel-toolchains}"
DEBIAN_MIRROR="http://deb.debian.org/debian"
# CPython for musl: the version of Debian bookworm's python3.11 source package.
MUSL_PYTHON_SERIES="3.11"
# scikit-learn publishes no musllinux wheel (numpy, scipy and pandas do): the check builds it from
# its sdist for the musl Python, with zig's clang (the C++ parts need a C++ library for musl,
# which Debian does not have; zig brings libc++), without OpenMP. Its version is the one of
# tools/wheel-check-constraints.txt.

# plat_arch PLATFORM_TAG, plat_libc PLATFORM_TAG: x86_64 or aarch64; glibc or musl.
plat_arch() {
  case "$1" in *_x86_64) echo x86_64 ;; *_aarch64) echo aarch64 ;; *) return 1 ;; esac
}
plat_libc() {
  case "$1" in manylinux*) echo glibc ;; musllinux*) echo musl ;; *) return 1 ;; esac
}

# retry CMD...: runs CMD up to three times, 10 and 20 s apart (downloads on a fresh machine).
retry() {
  local i
  for i in 1 2 3; do
    "$@" && return 0
    [ "$i" = 3 ] || { echo "wheel targets: '$1 ...' failed, try $((i + 1)) of 3 in $((i * 10)) s" >&2; sleep $((i * 10)); }
  done
  return 1
}

# The Debian packages each platform needs, build and check (a fresh machine has none of them):
#   aarch64: the cross GCC with arm64's C library headers and start files (libc6-dev-arm64-cross
#            is only a Recommends of gcc-aarch64-linux-gnu: without it the link fails on
#            Scrt1.o), qemu-user-static to run the check, mmdebstrap for the arm64 root;
#   musl:    musl-gcc and musl's headers, the kernel headers, patchelf (musl's SONAME),
#            mmdebstrap (trixie's musl), make for the CPython build.
debs_for() {
  case "$1" in
    aarch64-glibc) echo gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static mmdebstrap ;;
    x86_64-musl) echo musl-tools musl-dev linux-libc-dev patchelf mmdebstrap make ;;
    x86_64-glibc) ;;
    *) return 1 ;;
  esac
}

# need_debs PACKAGE...: installs the Debian packages that are missing (as root), else stops.
# apt waits for another apt run's lock (tools/wheel_toolchains.sh may be installing beside).
_apt_updated=0
need_debs() {
  local missing=() p
  for p in $(printf '%s\n' "$@" | sort -u); do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "needs the Debian packages ${missing[*]} (apt-get install ${missing[*]})"
  echo "wheel targets: apt-get install ${missing[*]}" >&2
  local lock=(-o DPkg::Lock::Timeout=600)
  if [ "$_apt_updated" = 0 ]; then
    retry apt-get "${lock[@]}" update -qq >/dev/null || die "apt-get update failed"
    _apt_updated=1
  fi
  retry env DEBIAN_FRONTEND=noninteractive apt-get "${lock[@]}" install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
}

# debian_root ARCH SUITE DIR PACKAGE...: DIR, a root with the packages and what they depend on,
# extracted only (no maintainer script runs, so no emulator is needed to make it).
debian_root() {
  local arch="$1" suite="$2" dir="$3"; shift 3
  [ -d "$dir" ] && return 0
  need_debs mmdebstrap
  rm -rf "$dir.tmp"
  mkdir -p "$(dirname "$dir")"
  local i
  for i in 1 2 3; do
    rm -rf "$dir.tmp"
    mmdebstrap --variant=extract --architectures="$arch" --include="$(IFS=,; echo "$*")" \
      "$suite" "$dir.tmp" "$DEBIAN_MIRROR" > "$dir.log" 2>&1 && break
    [ "$i" = 3 ] && { cat "$dir.log" >&2; die "mmdebstrap of $* ($arch, $suite) failed"; }
    echo "wheel targets: mmdebstrap of $* failed, try $((i + 1)) of 3" >&2; sleep $((i * 10))
  done
  # trixie's packages install under usr/ only; the /lib -> usr/lib links (where binaries look
  # for their loader) come from a setup step that an extract-only root does not run
  local d
  for d in bin sbin lib; do
    [ -e "$dir.tmp/$d" ] || [ -L "$dir.tmp/$d" ] || ln -s "usr/$d" "$dir.tmp/$d"
  done
  mv "$dir.tmp" "$dir"
}

# debian_source SUITE PACKAGE DESTDIR: the files of a Debian source package, downloaded with apt
# under a configuration of its own (no deb-src entry is added to the machine's).
debian_source() {
  local suite="$1" pkg="$2" dest="$3" d="$TOOLCHAINS/apt-src-$1"
  mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$dest"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $DEBIAN_MIRROR $suite main" \
    > "$d/sources.list"
  local opts=(-o Dir::Etc::SourceList="$d/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" -o APT::Sandbox::User=root)
  if [ ! -f "$d/updated" ]; then
    retry apt-get "${opts[@]}" update -qq >/dev/null || die "apt-get update of $suite's sources failed"
    touch "$d/updated"
  fi
  (cd "$dest" && retry apt-get "${opts[@]}" source -qq --download-only "$pkg" >/dev/null) \
    || die "apt-get source $pkg ($suite) failed"
}

# --- aarch64 -------------------------------------------------------------------------------

# aarch64_suite 3.X: the Debian release with an arm64 CPython 3.X, or nothing.
aarch64_suite() {
  case "$1" in 3.11) echo bookworm ;; 3.13) echo trixie ;; *) return 1 ;; esac
}

# aarch64_root 3.X: prints the root holding Debian's arm64 CPython 3.X (python3.X, its headers,
# its venv module; libstdc++6 for numpy's wheels), making it when missing.
aarch64_root() {
  local v="$1" suite dir
  suite="$(aarch64_suite "$v")" || die "no Debian release has an arm64 CPython $v (3.11: bookworm, 3.13: trixie)"
  dir="$TOOLCHAINS/arm64-$suite-python$v"
  if [ ! -d "$dir" ]; then
    debian_root arm64 "$suite" "$dir" "python$v" "python$v-venv" "libpython$v-dev" libstdc++6
    # An extract-only root has no byte code (Debian's maintainer scripts compile it), so every
    # start of the interpreter under qemu would compile each stdlib module it imports: about
    # 4.5 s for `import json, email, subprocess`, 1.1 s with the byte code. It is the same for
    # every build of 3.X (the magic number is fixed within a release series), so the host's
    # CPython 3.X writes it, natively, in a second.
    local host_py
    if host_py="$(find_python "$v")"; then
      "$host_py" -m compileall -q -j 0 "$dir/usr/lib/python$v" > "$dir.compileall.log" 2>&1 || true
    fi
  fi
  [ -x "$dir/usr/bin/python$v" ] || die "$dir has no usr/bin/python$v"
  echo "$dir"
}

# aarch64_venv ROOT 3.X VENV: a virtual environment of the root's arm64 CPython 3.X whose python
# commands (python, python3, python3.X) are scripts that run it under qemu-user with the root's
# loader and libraries (qemu's -L). qemu's -0 gives the interpreter the script's path as argv[0],
# so that sys.executable is the venv's python and what the interpreter starts with it
# (subprocess, pytest's) runs under qemu too. No binfmt_misc registration: that table is the
# kernel's, shared by the whole machine, and a container may not have it.
QEMU_AARCH64=/usr/bin/qemu-aarch64-static
aarch64_venv() {
  local target="$1" v="$2" venv="$3" n
  need_debs qemu-user-static
  "$QEMU_AARCH64" -L "$target" "$target/usr/bin/python$v" -m venv --without-pip "$venv" \
    || die "could not make a virtual environment of $target's python$v under qemu"
  for n in python python3 "python$v"; do
    rm -f "$venv/bin/$n"
    printf '#!/bin/sh\n# %s under qemu-user (tools/wheel_targets.sh, aarch64_venv)\nexec %s -L %s -0 "$0" %s "$@"\n' \
      "$target/usr/bin/python$v" "$QEMU_AARCH64" "$target" "$target/usr/bin/python$v" > "$venv/bin/$n"
    chmod +x "$venv/bin/$n"
  done
  "$venv/bin/python" -c 'import platform, sys; sys.exit(platform.machine() != "aarch64" or sys.prefix != sys.argv[1])' "$venv" \
    || die "$venv/bin/python does not run as an aarch64 CPython in its virtual environment"
}

# aarch64_sysconfig ROOT 3.X DIR: DIR holds _sysconfigdata__linux_aarch64-linux-gnu.py, the root's
# sysconfig data with its include directories moved into the root, for a cross build by the
# host's CPython 3.X (_PYTHON_SYSCONFIGDATA_NAME, _PYTHON_HOST_PLATFORM; setuptools then takes
# the compiler, aarch64-linux-gnu-gcc, and the extension suffix from it).
aarch64_sysconfig() {
  local root="$1" v="$2" dir="$3" src
  src="$(ls "$root/usr/lib/python$v"/_sysconfigdata__*aarch64-linux-gnu.py 2>/dev/null | head -1)"
  [ -n "$src" ] || die "no aarch64 sysconfig data in $root/usr/lib/python$v"
  mkdir -p "$dir"
  sed "s|'/usr/include|'$root/usr/include|g" "$src" > "$dir/_sysconfigdata__linux_aarch64-linux-gnu.py"
}

# --- musl ----------------------------------------------------------------------------------

# musl_toolchain: prints the directory of the musl tools (made when missing):
#   root/         trixie's musl 1.2.5 (its loader runs the musl programs)
#   bin/musl-cc   musl-gcc with the kernel headers, answering -print-multiarch with
#                 x86_64-linux-musl, and linking against lib/libc.so
#   lib/libc.so   bookworm's musl with the SONAME libc.musl-x86_64.so.1, as Alpine names it
#                 (auditwheel's musllinux policy allows that name only)
#   include/      the kernel headers (linux/, asm/, asm-generic/), zlib's and libffi's
musl_toolchain() {
  local t="$TOOLCHAINS/musl-x86_64"
  if [ ! -x "$t/bin/musl-cc" ]; then
    # shellcheck disable=SC2046
    need_debs $(debs_for x86_64-musl)
    rm -rf "$t.tmp"
    mkdir -p "$t.tmp/bin" "$t.tmp/lib" "$t.tmp/include"
    debian_root amd64 trixie "$t.tmp/root" musl
    local banner
    banner="$("$t.tmp/root/usr/lib/x86_64-linux-musl/libc.so" 2>&1 || true)"   # exits 1 after it
    echo "$banner" | grep -q "Version 1\.2\.[4-9]" || die "trixie's musl is not 1.2.4 or newer: $banner"
    cp /usr/lib/x86_64-linux-musl/libc.so "$t.tmp/lib/libc.so"
    patchelf --set-soname libc.musl-x86_64.so.1 "$t.tmp/lib/libc.so"
    ln -s libc.so "$t.tmp/lib/libc.musl-x86_64.so.1"
    ln -s /usr/include/linux "$t.tmp/include/linux"
    ln -s /usr/include/asm-generic "$t.tmp/include/asm-generic"
    ln -s /usr/include/x86_64-linux-gnu/asm "$t.tmp/include/asm"
    cat > "$t.tmp/bin/musl-cc" <<EOF
#!/bin/sh
# musl-gcc (Debian's musl-tools) as a compiler for x86_64-linux-musl; made by tools/wheel_targets.sh
case "\$1" in -print-multiarch|--print-multiarch) echo x86_64-linux-musl; exit 0 ;; esac
exec musl-gcc -isystem "$t/include" "\$@" -L"$t/lib" -Wl,-rpath-link,"$t/lib" -Wl,--dynamic-linker="$t/root/usr/lib/x86_64-linux-musl/libc.so"
EOF
    chmod +x "$t.tmp/bin/musl-cc"
    mv "$t.tmp" "$t"
  fi
  echo "$t"
}

# musl_python: prints the path of a CPython (MUSL_PYTHON_SERIES) built against musl, making it
# when missing (figures in docs/install.rst): Debian's source, zlib and libffi built static
# (position-independent) into it, the stdlib modules that need other libraries left out
# (ssl, hashlib's OpenSSL part, sqlite3, bz2, lzma, readline, curses, dbm, tkinter, uuid,
# decimal's C part: pip, numpy, scipy, pandas, scikit-learn and defrag need none of them),
# -O2 without debug information, no test modules, the stdlib byte-compiled once (not also for
# -O and -OO).
musl_python() {
  local t v="$MUSL_PYTHON_SERIES" dir src b
  t="$(musl_toolchain)"
  dir="$TOOLCHAINS/musl-python$v"
  if [ ! -x "$dir/bin/python$v" ]; then
    src="$TOOLCHAINS/musl-python-src"
    rm -rf "$src" "$dir.tmp"
    debian_source bookworm "python$v" "$src"
    debian_source bookworm zlib "$src"
    debian_source bookworm libffi "$src"
    b="$src/build"
    mkdir -p "$b"
    local deps="$b/deps" cc="$t/bin/musl-cc" log="$src/build.log"
    echo "wheel targets: building CPython $v for musl (log: $log)" >&2
    (
      set -e
      cd "$b"
      for a in "$src"/zlib_*.orig.tar.* "$src"/libffi_*.orig.tar.* "$src"/python"$v"_*.orig.tar.*; do
        tar -xf "$a"
      done
      (cd zlib-*/ && CC="$cc" CFLAGS="-O2 -fPIC" ./configure --static --prefix="$deps" && make -j2 libz.a && make install)
      (cd libffi-*/ && CC="$cc" CFLAGS="-O2 -fPIC" ./configure --disable-shared --enable-static --with-pic \
         --disable-docs --disable-multi-os-directory --prefix="$deps" && make -j2 && make install)
      local off=()
      for m in _sqlite3 _ssl _hashlib _tkinter _curses _curses_panel _dbm _gdbm readline _lzma _bz2 \
               _uuid nis _crypt _decimal ossaudiodev spwd xxlimited xxlimited_35 _ctypes_test; do
        off+=("py_cv_module_$m=n/a")
      done
      cd Python-*/
      env "${off[@]}" CC="$cc" CPPFLAGS="-I$deps/include" LDFLAGS="-L$deps/lib" \
        ZLIB_CFLAGS="-I$deps/include" ZLIB_LIBS="-L$deps/lib -lz" PKG_CONFIG_LIBDIR="$deps/lib/pkgconfig" \
        OPT="-DNDEBUG -g0 -fwrapv -O2 -Wall" \
        ./configure --prefix="$dir" --disable-test-modules --with-ensurepip=no
      # the install byte-compiles the stdlib three times (plain, -O, -OO); the check runs
      # without -O, so only the first is kept
      sed -i 's|$(PYTHON_FOR_BUILD) -Wi -OO\? $(DESTDIR)$(LIBDEST)/compileall.py|true|' Makefile
      grep -q -- '-Wi -O' Makefile && { echo "the Makefile still byte-compiles with -O" >&2; exit 1; }
      make -j2
      make install
    ) > "$log" 2>&1 || { tail -40 "$log" >&2; rm -rf "$dir"; die "the musl CPython build failed (log: $log)"; }
    "$dir/bin/python$v" -c 'import ctypes, zlib, pyexpat, _socket' \
      || die "the musl CPython lacks a module (log: $log)"
    rm -rf "$b"
  fi
  echo "$dir/bin/python$v"
}

# zig_compiler: prints the path of zig (PyPI's ziglang, pinned, in a virtual environment of its
# own). Its cache (the musl C library and libc++ it compiles on first use: about 1.6 minutes of
# CPU, measured) goes under $TOOLCHAINS too: ZIG_GLOBAL_CACHE_DIR="$(zig_cache)" for each run.
ZIGLANG_VERSION="0.17.1"
zig_cache() { echo "$TOOLCHAINS/zig-cache"; }
zig_compiler() {
  local venv="$TOOLCHAINS/ziglang-$ZIGLANG_VERSION"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import ziglang' 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "ziglang==$ZIGLANG_VERSION" \
      || die "pip install ziglang==$ZIGLANG_VERSION failed"
  fi
  "$venv/bin/python" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))'
}

# pypi_sdist NAME VERSION DESTDIR: the source distribution of NAME==VERSION from PyPI's simple
# index (PEP 691), checked against the index's SHA-256. (`pip download --no-binary` would build
# it to read its metadata.)
pypi_sdist() {
  python3 - "$@" <<'PY' || die "could not download the sdist of $1 $2"
import hashlib, json, os, re, sys, urllib.request
name, version, dest = sys.argv[1:4]
norm = re.sub(r"[-_.]+", "-", name).lower()
req = urllib.request.Request(f"https://pypi.org/simple/{norm}/",
                             headers={"Accept": "application/vnd.pypi.simple.v1+json"})
files = json.load(urllib.request.urlopen(req, timeout=120))["files"]
want = {f"{n}-{version}.tar.gz" for n in (name, name.replace("-", "_"), norm.replace("-", "_"))}
(f,) = [f for f in files if f["filename"] in want]
data = urllib.request.urlopen(f["url"], timeout=300).read()
if hashlib.sha256(data).hexdigest() != f["hashes"]["sha256"]:
    sys.exit(f"{f['filename']}: SHA-256 differs from the index's")
os.makedirs(dest, exist_ok=True)
with open(os.path.join(dest, f["filename"]), "wb") as out:
    out.write(data)
PY
}

# musl_sklearn_wheels: prints a directory with scikit-learn's wheel for the musl CPython (the
# version pinned in tools/wheel-check-constraints.txt), built from its sdist when missing: by zig's
# clang (PyPI's ziglang; C and C++, libc++ linked in statically), without OpenMP (zig has no
# omp.h; scikit-learn's build then goes without). PyPI has no musllinux wheel of scikit-learn,
# of any version (checked 2026-11-28), so this is the longest step of a first run. -O1 -g0 in
# place of meson's release -O3: this build only runs the check's test selection and the
# fingerprint's fits, and -O1 compiles it in less CPU (docs/install.rst has both figures); the
# results do not change with it (no -ffast-math, and x86-64's baseline has no FMA to contract to).
SKLEARN_MUSL_CFLAGS="-O1 -g0"
musl_sklearn_wheels() {
  local py v version dir zig
  py="$(musl_python)"
  v="$MUSL_PYTHON_SERIES"
  version="$(sed -n 's/^scikit-learn==//p' "$root/tools/wheel-check-constraints.txt")"
  [ -n "$version" ] || die "no scikit-learn version in tools/wheel-check-constraints.txt"
  dir="$TOOLCHAINS/musl-python$v-scikit-learn-$version-${SKLEARN_MUSL_CFLAGS//[ -]/}"
  if ! ls "$dir"/scikit_learn-*.whl >/dev/null 2>&1; then
    zig="$(zig_compiler)"
    rm -rf "$dir.tmp"
    mkdir -p "$dir.tmp"
    echo "wheel targets: building scikit-learn $version for musl (log: $dir.log)" >&2
    (
      set -e
      "$py" -m venv --without-pip "$dir.tmp/venv"
      host_pip_into "$dir.tmp/venv" musllinux_1_2_x86_64 "$v" -c "$root/tools/wheel-check-constraints.txt" \
        pip numpy scipy meson-python meson ninja "Cython>=3"
      pypi_sdist scikit-learn "$version" "$dir.tmp/sdist"
      # PKG_CONFIG_LIBDIR: meson finds Python's headers by pkg-config, which would otherwise
      # give the host's glibc CPython's
      PKG_CONFIG_LIBDIR="$(dirname "$(dirname "$py")")/lib/pkgconfig" PATH="$dir.tmp/venv/bin:$PATH" \
        ZIG_GLOBAL_CACHE_DIR="$(zig_cache)" \
        CC="$zig cc -target x86_64-linux-musl" CXX="$zig c++ -target x86_64-linux-musl" \
        CFLAGS="$SKLEARN_MUSL_CFLAGS" CXXFLAGS="$SKLEARN_MUSL_CFLAGS" \
        "$dir.tmp/venv/bin/python" -m pip wheel --no-index --no-deps --no-build-isolation \
        -Ccompile-args=-v \
        --wheel-dir "$dir.tmp" "$dir.tmp"/sdist/scikit_learn-*.tar.gz
    ) > "$dir.log" 2>&1 || { tail -40 "$dir.log" >&2; die "the scikit-learn build for musl failed (log: $dir.log)"; }
    rm -rf "$dir.tmp/venv" "$dir.tmp/sdist"
    mv "$dir.tmp" "$dir"
  fi
  echo "$dir"
}

# --- installing into a foreign environment ----------------------------------------------------

# host_pip_into VENV PLATFORM 3.X PIP_ARGS...: binary wheels for that platform and Python,
# installed by the host's pip (that of the host's CPython 3.X) into the site-packages
# of VENV, a virtual environment of a foreign interpreter. pip run under qemu took 5.5 minutes
# for numpy, scipy, scikit-learn, pandas and pytest, this takes seconds; the byte code it writes
# is the same (.pyc files depend on the Python version only).
host_pip_into() {
  local venv="$1" plat="$2" v="$3"; shift 3
  local tag="cp${v/./}" site plats=()
  site="$(ls -d "$venv"/lib/python"$v"/site-packages)"
  case "$plat" in
    manylinux*_aarch64) plats=(--platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64) ;;
    musllinux*_x86_64) plats=(--platform musllinux_1_2_x86_64 --platform musllinux_1_1_x86_64) ;;
    *) die "host_pip_into: no platform list for $plat" ;;
  esac
  "$(find_python "$v")" -m pip install --quiet --disable-pip-version-check --no-warn-conflicts \
    --root-user-action=ignore --only-binary=:all: \
    "${plats[@]}" --python-version "$v" --implementation cp --abi "$tag" --abi abi3 --abi none \
    --target "$site" --upgrade "$@" || die "pip could not install $* for $plat"
}
