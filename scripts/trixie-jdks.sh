#!/usr/bin/env bash
# Provides JDK 21 and JDK 25 from Debian trixie on this older Debian, for the tests (doc/testing.md).
#
# Trixie's JDKs need trixie's C library, so this script downloads them with a private apt
# configuration (its own sources list, lists, cache and state: the system's apt is never touched),
# unpacks them beside trixie's libc6, zlib1g, libgcc-s1 and libstdc++6, and turns every executable
# of each JDK (bin/*, lib/jspawnhelper, lib/jexec) into a small script that starts the real one
# through trixie's dynamic loader:
#   <trixie>/ld-linux-x86-64.so.2 --library-path <trixie libs>:<jdk>/lib:<jdk>/lib/server <real> ...
# So bin/java, bin/javac, bin/jcmd and every JVM they start (the JDK spawns child processes through
# lib/jspawnhelper) run on trixie's libc, while java.home stays the JDK's own home.
#
# usage: trixie-jdks.sh            lay the JDKs out (quick when already done), print "<N> <home>"
#        trixie-jdks.sh --refresh  download and lay out again (new trixie updates)
#        trixie-jdks.sh --where    print the directory that holds the homes (for meson), and exit
# The cache is $HPROF_JDKS_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/hprof-jdks (about 1 GB).
set -euo pipefail

versions=(21 25)
suite=trixie
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
cache=${HPROF_JDKS_CACHE:-${XDG_CACHE_HOME:-~/.cache}/hprof-jdks}  # ~: works without $HOME too
homes=$cache/homes

die() {
  echo "trixie-jdks: $*; no JDK 21 and 25 from Debian $suite (their tests are skipped)" >&2
  exit 1
}

case "${1:-}" in
  --where) echo "$homes"; exit 0 ;;
  --refresh | '') ;;
  *) echo "usage: $0 [--refresh|--where]" >&2; exit 2 ;;
esac

# Already laid out: every home answers -version through its loader.
ready() {
  local v
  for v in "${versions[@]}"; do
    [ -f "$homes/jdk-$v/release" ] && [ -f "$cache/ready" ] || return 1
  done
}
print_homes() {
  local v
  for v in "${versions[@]}"; do echo "$v $(readlink -f "$homes/jdk-$v")"; done
}
if [ "${1:-}" != --refresh ] && ready; then
  print_homes
  exit 0
fi

[ "$(dpkg --print-architecture)" = amd64 ] || die "only amd64 is supported (the loader is ld-linux-x86-64)"
[ -f "$keyring" ] || die "$keyring is missing (apt-get install debian-archive-keyring)"

# The archive's address, from the system's own apt sources: the entry for this release's main suite.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
archive_uri() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822: blank-line separated stanzas with Types, URIs, Suites (and perhaps Enabled: no)
    awk -v want="$codename" '
      function done_stanza() {
        if (types ~ /(^| )deb( |$)/ && enabled != "no" && (" " suites " ") ~ (" " want " ")) {
          split(uris, u, " "); print u[1]; exit
        }
        types = uris = suites = enabled = ""
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { done_stanza(); next }
      { key = tolower($1); sub(/:$/, "", key); $1 = ""; val = $0; sub(/^ +/, "", val)
        if (key == "types") types = val; else if (key == "uris") uris = val
        else if (key == "suites") suites = val; else if (key == "enabled") enabled = tolower(val) }
      END { done_stanza() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    # one-line style: deb [options] URI suite components...
    awk -v want="$codename" '$1 == "deb" {
        i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
        if ($(i + 1) == want) { print $i; exit } }' "$f"
  done
}
[ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release"
uri=$(archive_uri | head -n 1)
[ -n "$uri" ] || die "no apt source for suite $codename in /etc/apt/sources.list{,.d} to take the archive address from"

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9  # one layout at a time (meson, CI and a developer may start this together)

# A private apt: its own sources list, lists, cache and an empty dpkg status.
apt_dir=$cache/apt
mkdir -p "$apt_dir/etc/sources.list.d" "$apt_dir/etc/preferences.d" "$apt_dir/state/lists/partial" \
         "$apt_dir/cache/archives/partial" "$cache/debs"
echo "deb [signed-by=$keyring] $uri $suite main" > "$apt_dir/etc/sources.list"
: > "$apt_dir/state/status"
apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/etc/sources.list" -o "Dir::Etc::sourceparts=$apt_dir/etc/sources.list.d"
          -o "Dir::Etc::preferences=$apt_dir/etc/preferences" -o "Dir::Etc::preferencesparts=$apt_dir/etc/preferences.d"
          -o "Dir::State=$apt_dir/state" -o "Dir::State::status=$apt_dir/state/status"
          -o "Dir::Cache=$apt_dir/cache" -o Debug::NoLocking=1 -o Acquire::Languages=none -o Acquire::Retries=1
          -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -q)
[ "$(id -u)" -ne 0 ] || apt_opts+=(-o APT::Sandbox::User=root)  # the _apt user cannot write the cache
log=$cache/apt.log
# The first error apt gives (the line under "Err:", else the first E: or W: line).
apt_error() {
  { grep -m1 -A1 '^Err:' "$log" | sed -n '2s/^ *//p'; grep -m1 -E '^(E|W):' "$log"; tail -n 1 "$log"; } | head -n 1
}
apt-get "${apt_opts[@]}" --error-on=any update > "$log" 2>&1 || die "cannot reach $uri $suite: $(apt_error)"

pkgs=(libc6 zlib1g libgcc-s1 libstdc++6)
for v in "${versions[@]}"; do pkgs+=("openjdk-$v-jre-headless" "openjdk-$v-jdk-headless"); done
rm -f "$cache/debs/"*.deb
(cd "$cache/debs" && apt-get "${apt_opts[@]}" download "${pkgs[@]}") >> "$log" 2>&1 ||
  die "apt-get download from $uri $suite failed: $(apt_error)"

# Unpack (dpkg -x, but without the jmods, manuals and docs the tests never read: 400 MB less).
root=$cache/trixie
rm -f "$cache/ready"
rm -rf "$root" "$homes"
mkdir -p "$root" "$homes"
for deb in "$cache/debs/"*.deb; do
  dpkg-deb --fsys-tarfile "$deb" |
    tar -x -C "$root" --exclude='./usr/lib/jvm/*/jmods' --exclude='./usr/share/doc' --exclude='./usr/share/man' \
        --exclude='./usr/lib/jvm/*/man' --exclude='./usr/lib/jvm/*/legal' --exclude='./usr/lib/jvm/*/docs'
done
rm -f "$cache/debs/"*.deb  # 500 MB, and --refresh downloads anew anyway

libs=$root/usr/lib/x86_64-linux-gnu
loader=$libs/ld-linux-x86-64.so.2
[ -x "$loader" ] || die "trixie's libc6 has no $loader"

# Debian points the JDKs' configuration (lib/jvm.cfg, conf/*) at /etc/java-N-openjdk: point
# absolute links that have a target in the unpacked tree at that target instead.
find "$root" -type l -lname '/*' | while read -r link; do
  target=$(readlink "$link")
  if [ -e "$root$target" ]; then ln -sfn "$root$target" "$link"; fi
done

is_elf_program() {
  [ -f "$1" ] && [ -x "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]
}

for v in "${versions[@]}"; do
  home=$root/usr/lib/jvm/java-$v-openjdk-amd64
  [ -f "$home/release" ] && [ -f "$home/lib/modules" ] && [ -f "$home/bin/javac" ] ||
    die "the trixie packages of JDK $v lack release, lib/modules or bin/javac"
  mkdir -p "$home/lib/trixie-elf"
  for prog in "$home"/bin/* "$home/lib/jspawnhelper" "$home/lib/jexec"; do
    is_elf_program "$prog" || continue
    real=$home/lib/trixie-elf/$(basename "$prog")
    mv "$prog" "$real"
    # --library-path replaces LD_LIBRARY_PATH for the loader, so the caller's comes after ours
    # (tests load libhprof.so through it); --argv0 keeps the tool's name in argv[0].
    cat > "$prog" <<EOF
#!/bin/sh
# Written by scripts/trixie-jdks.sh: runs trixie's $(basename "$prog") through trixie's loader and libraries.
exec '$loader' --argv0 "\$0" --library-path '$libs:$home/lib:$home/lib/server'"\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" '$real' "\$@"
EOF
    chmod 755 "$prog"
  done
  ln -sfn "$home" "$homes/jdk-$v"
  out=$("$home/bin/java" -version 2>&1) || die "JDK $v does not start through trixie's loader: $(echo "$out" | head -n 1)"
done

date -u +%FT%TZ > "$cache/ready"
print_homes
