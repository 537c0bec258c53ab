# Shell functions shared by tools/build_wheel.sh and tools/check_wheels.sh (sourced, not run).
# describe_wheel needs auditwheel on PATH; MAX_GLIBC and MAX_BYTES set by the caller.

# find_python 3.X: the path of a working CPython 3.X: `python3.X` on PATH when it runs (a
# pyenv shim of a version that is not selected does not), else pyenv's newest 3.X.*.
find_python() {
  local v="$1" py cand
  if py="$(command -v "python$v" 2>/dev/null)" && "$py" -c 'import sys' >/dev/null 2>&1; then
    "$py" -c 'import sys; print(sys.executable)'
    return 0
  fi
  local pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
  cand="$(ls -d "$pyenv_root/versions/$v".* 2>/dev/null | grep -E "/$v\.[0-9]+$" | sort -V | tail -1 || true)"
  if [ -n "$cand" ] && [ -x "$cand/bin/python$v" ] && "$cand/bin/python$v" -c 'import sys' >/dev/null 2>&1; then
    echo "$cand/bin/python$v"
    return 0
  fi
  return 1
}

# newest_glibc FILE...: the newest GLIBC_x.y version the files need (their version-needs
# sections, as the dynamic loader checks them), or "none".
newest_glibc() {
  local v
  v="$(for f in "$@"; do
         readelf -V --wide "$f" | awk '/^Version needs section/ {on = 1; next}
                                     /^Version (definition|symbols) section/ {on = 0}
                                     on && match($0, /Name: GLIBC_[0-9.]+/) {print substr($0, RSTART + 6, RLENGTH - 6)}'
       done | sort -V | tail -1)"
  echo "${v:-none}"
}

# glibc_of_tag PLATFORM_TAG: the glibc version a manylinux platform tag stands for (2.17 for
# manylinux2014_x86_64), or nothing for a tag that is not manylinux.
glibc_of_tag() {
  case "$1" in
    manylinux1_*) echo 2.5 ;;
    manylinux2010_*) echo 2.12 ;;
    manylinux2014_*) echo 2.17 ;;
    manylinux_*_*_*) local rest="${1#manylinux_}"; local major="${rest%%_*}"; rest="${rest#*_}"; echo "$major.${rest%%_*}" ;;
  esac
}

version_le() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$1" ]; }

# MAX_MUSL: the newest musllinux tag a wheel may carry (musllinux_1_2: musl 1.2, Alpine 3.13+).
MAX_MUSL="1.2"

# elf_machine FILE: the ELF machine of a shared object, as the wheel's architecture names it.
elf_machine() {
  case "$(readelf -h "$1" | sed -n 's/^ *Machine: *//p')" in
    *X86-64*) echo x86_64 ;;
    AArch64) echo aarch64 ;;
    *) readelf -h "$1" | sed -n 's/^ *Machine: *//p' ;;
  esac
}

# describe_wheel WHEEL: prints its tag, size, `auditwheel show`, the ELF machine and the newest
# GLIBC symbol version each .so inside needs (for musllinux: that none needs one, and the C
# library it names) and the bundled libraries; returns 1 when the wheel is over MAX_BYTES, tagged
# for a glibc newer than MAX_GLIBC or a musl newer than MAX_MUSL, has a .so of another
# architecture than its tag's, or (manylinux) needs a GLIBC symbol newer than MAX_GLIBC or
# (musllinux) any GLIBC symbol. Leaves "name|tag|KiB|newest GLIBC|bundled" in WHEEL_ROW for
# wheel_table.
describe_wheel() {
  local wheel="$1" name tag plat bytes d so newest bundled ok=0 g arch="" libc="" m
  name="$(basename "$wheel")"
  tag="${name#*-*-}"; tag="${tag%.whl}"          # cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64
  bytes="$(stat -c %s "$wheel")"
  echo "== $name"
  echo "   tag:    $tag"
  echo "   size:   $bytes bytes ($((bytes / 1024)) KiB)"
  if [ "$bytes" -gt "$MAX_BYTES" ]; then echo "   ERROR: larger than $MAX_BYTES bytes"; ok=1; fi
  local IFS_old="$IFS"; IFS=.
  for plat in ${tag##*-}; do
    case "$plat" in *_x86_64) arch=x86_64 ;; *_aarch64) arch=aarch64 ;; esac
    case "$plat" in
      musllinux_*)
        libc=musl
        g="$(echo "$plat" | sed -E 's/^musllinux_([0-9]+)_([0-9]+)_.*/\1.\2/')"   # musllinux_1_2_x86_64 -> 1.2
        if ! version_le "$g" "$MAX_MUSL"; then
          echo "   ERROR: platform tag $plat is newer than musllinux for musl $MAX_MUSL"; ok=1
        fi ;;
      *)
        libc=glibc
        g="$(glibc_of_tag "$plat")"
        if [ -z "$g" ] || ! version_le "$g" "$MAX_GLIBC"; then
          echo "   ERROR: platform tag $plat is not manylinux for glibc <= $MAX_GLIBC"; ok=1
        fi ;;
    esac
  done
  IFS="$IFS_old"
  echo "   auditwheel show:"
  auditwheel show "$wheel" 2>&1 | sed 's/^/     | /'
  d="$(mktemp -d)"
  python3 -m zipfile -e "$wheel" "$d"
  echo "   per shared object: ELF machine, newest GLIBC symbol version needed"
  while IFS= read -r so; do
    g="$(newest_glibc "$so")"
    m="$(elf_machine "$so")"
    printf '     %-52s %-8s %s\n' "${so#"$d"/}" "$m" "$g"
    if [ "$m" != "$arch" ]; then
      echo "   ERROR: ${so#"$d"/} is $m, the tag says $arch"; ok=1
    fi
    if [ "$libc" = musl ] && [ "$g" != none ]; then
      echo "   ERROR: ${so#"$d"/} needs $g in a musllinux wheel"; ok=1
    elif [ "$g" != none ] && ! version_le "${g#GLIBC_}" "$MAX_GLIBC"; then
      echo "   ERROR: ${so#"$d"/} needs $g, newer than GLIBC_$MAX_GLIBC"; ok=1
    fi
  done < <(find "$d" -name '*.so*' -type f | sort)
  if [ "$libc" = musl ]; then
    newest="none (musl: $(find "$d" -name '*.so*' -type f -exec readelf -d {} \; \
      | sed -n 's/.*(NEEDED).*\[\(libc[.]musl[^]]*\)\].*/\1/p' | sort -u | tr '\n' ' ' | sed 's/ $//'))"
  else
    newest="$(find "$d" -name '*.so*' -type f -print0 | xargs -0 bash -c "$(declare -f newest_glibc); newest_glibc \"\$@\"" _)"
  fi
  bundled="$(find "$d" -path '*.libs/*' -type f -printf '%f ' | sed 's/ $//')"
  echo "   newest GLIBC overall: $newest"
  echo "   bundled libraries: ${bundled:-none}"
  rm -rf "$d"
  WHEEL_ROW="$name|$tag|$((bytes / 1024))|$newest|${bundled:-none}"
  ALL_ROWS+=("$WHEEL_ROW")
  return "$ok"
}

# wheel_table: the rows left by describe_wheel, as a Markdown table (docs/install.rst, "Wheels").
wheel_table() {
  echo
  echo "| wheel | size | newest GLIBC symbol | bundled |"
  echo "| --- | ---: | --- | --- |"
  local row name tag kib glibc bundled
  for row in "${ALL_ROWS[@]}"; do
    IFS='|' read -r name tag kib glibc bundled <<< "$row"
    printf '| `%s` | %s KiB | %s | %s |\n' "$name" "$kib" "$glibc" "$bundled"
  done
}
ALL_ROWS=()
