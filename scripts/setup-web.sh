#!/usr/bin/env bash
# Prepares this machine to build wgx for the web (WebAssembly): Debian's emscripten, and PCRE2 and
# utf8proc compiled to WebAssembly from Debian's source packages into a cache outside the
# repository. Idempotent and quick when nothing is missing. Prints the libraries' prefix last.
#
#   WGX_CACHE_DIR=/path      where the compiled libraries live (~/.cache/wgx)
set -euo pipefail
trap 'echo "setup-web: error: line $LINENO: $BASH_COMMAND failed" >&2' ERR
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=web.lock
source "$here/web.lock"

say() { echo "setup-web: $*" >&2; }
die() { echo "setup-web: error: $*" >&2; exit 1; }

# ---- Debian packages ---------------------------------------------------------------------------
# emscripten (the compiler), nodejs and npm (the web tests), chromium (the page test; it brings
# SwiftShader), dpkg-dev (apt-get source unpacks with it), cmake and ninja (PCRE2's build).
packages=(emscripten chromium dpkg-dev cmake ninja-build python3 ca-certificates)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
"$here/install-packages.sh" setup-web "${packages[@]}"
# emcc's whole answer first (no pipe: a reader that stops after one line must not fail it).
said=$(emcc --version 2>&1) || die "emcc --version failed: $(printf '%s' "$said" | head -5)"
got=$(printf '%s\n' "$said" | sed -n '1s/.* \([0-9][0-9.]*\) .*/\1/p')
[ "$got" = "$EMSCRIPTEN_VERSION" ] || die "emcc is version '$got'; the web build is pinned to emscripten $EMSCRIPTEN_VERSION (Debian bookworm's)"

# ---- PCRE2 and utf8proc for WebAssembly ------------------------------------------------------
prefix=${WGX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/wgx}/web/deps-emscripten$EMSCRIPTEN_VERSION-pcre2-$PCRE2_VERSION-utf8proc-$UTF8PROC_VERSION
if [ -f "$prefix/lib/libpcre2-8.a" ] && [ -f "$prefix/lib/libutf8proc.a" ]; then
  echo "$prefix"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Source packages come from the same Debian archive as the binary ones, through apt's signed
# index; a private source list keeps the system's configuration untouched.
mkdir -p "$work/apt/lists/partial"
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
echo "deb-src http://deb.debian.org/debian $codename main" >"$work/apt/sources.list"
apt_src=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/apt/lists" -o APT::Sandbox::User=root)
say "fetching the $PCRE2_SOURCE $PCRE2_VERSION and $UTF8PROC_SOURCE $UTF8PROC_VERSION sources from Debian"
apt-get "${apt_src[@]}" update -qq >&2 || die "apt-get update of the source index failed"
(cd "$work" && apt-get "${apt_src[@]}" source --download-only -qq "$PCRE2_SOURCE=$PCRE2_VERSION-*" "$UTF8PROC_SOURCE=$UTF8PROC_VERSION-*" >&2 2>"$work/src.log" \
  || (cd "$work" && apt-get "${apt_src[@]}" source --download-only -qq "$PCRE2_SOURCE" "$UTF8PROC_SOURCE" >&2)) \
  || die "apt-get source failed: $(tail -3 "$work/src.log")"
check() {  # tarball sha256
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$2" ] || die "$(basename "$1") has sha256 $got, but the pin is $2"
}
pcre_tar="$work/${PCRE2_SOURCE}_$PCRE2_VERSION.orig.tar.gz"
utf_tar="$work/${UTF8PROC_SOURCE}_$UTF8PROC_VERSION.orig.tar.gz"
[ -f "$pcre_tar" ] && [ -f "$utf_tar" ] || die "Debian no longer has $PCRE2_SOURCE $PCRE2_VERSION or $UTF8PROC_SOURCE $UTF8PROC_VERSION; update scripts/web.lock"
check "$pcre_tar" "$PCRE2_SHA256"
check "$utf_tar" "$UTF8PROC_SHA256"

say "compiling PCRE2 and utf8proc to WebAssembly"
mkdir -p "$work/pcre2" "$work/utf8proc" "$prefix.tmp/lib" "$prefix.tmp/include"
tar -xzf "$pcre_tar" -C "$work/pcre2" --strip-components=1
tar -xzf "$utf_tar" -C "$work/utf8proc" --strip-components=1
emcmake cmake -S "$work/pcre2" -B "$work/pcre2/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix.tmp" -DBUILD_SHARED_LIBS=OFF -DPCRE2_BUILD_PCRE2_8=ON \
  -DPCRE2_BUILD_PCRE2_16=OFF -DPCRE2_BUILD_PCRE2_32=OFF -DPCRE2_SUPPORT_JIT=OFF \
  -DPCRE2_SUPPORT_UNICODE=ON -DPCRE2_BUILD_PCRE2GREP=OFF -DPCRE2_BUILD_TESTS=OFF >"$work/pcre2.log" 2>&1 \
  || die "configuring PCRE2 failed: $(tail -5 "$work/pcre2.log")"
cmake --build "$work/pcre2/build" --target install >>"$work/pcre2.log" 2>&1 \
  || die "building PCRE2 failed: $(tail -5 "$work/pcre2.log")"
emcc -O2 -DUTF8PROC_STATIC -c "$work/utf8proc/utf8proc.c" -o "$work/utf8proc/utf8proc.o" \
  || die "compiling utf8proc failed"
emar rcs "$prefix.tmp/lib/libutf8proc.a" "$work/utf8proc/utf8proc.o"
cp "$work/utf8proc/utf8proc.h" "$prefix.tmp/include/"
rm -rf "$prefix" && mv "$prefix.tmp" "$prefix"
echo "$prefix"
