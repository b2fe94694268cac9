#!/usr/bin/env bash
# Installs the Debian packages named that are not installed yet (apt-get, through sudo where not
# root). Used by the setup scripts; NAME labels its messages.
#   scripts/install-packages.sh NAME PACKAGE...
set -euo pipefail
name=$1
shift
die() { echo "$name: error: $*" >&2; exit 1; }
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0
echo "$name: installing Debian packages: ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to install: ${missing[*]}"
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >&2 || die "apt-get update failed"
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 \
  || die "apt-get install failed for: ${missing[*]}"
