#!/usr/bin/env bash
# Builds the layer into DIR (default build/vk_pipeline_stats): the library and its manifest.
# Needs the Vulkan headers (Debian: libvulkan-dev).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-build/vk_pipeline_stats}
mkdir -p "$dir"
c++ -std=c++20 -O2 -fPIC -shared -Wall -Wextra -Werror ${VULKAN_INCLUDE:+-I"$VULKAN_INCLUDE"} \
  -o "$dir/libwgx_pipeline_stats.so" "$here/layer.cpp"
cp "$here/manifest.json" "$dir/VK_LAYER_WGX_pipeline_stats.json"
echo "built $dir/libwgx_pipeline_stats.so; use: VK_LAYER_PATH=$dir VK_INSTANCE_LAYERS=VK_LAYER_WGX_pipeline_stats wgx ..." >&2
