// Packs f32 values into f16 pairs (element 2k in the low half; a missing last element is 0).
// Products with f16 output and odd N go through f32: their output words straddle rows and tiles.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
struct Params {
  numel: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> In: array<u32>;
@group(0) @binding(2) var<storage, read_write> Out: array<u32>;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = wgx_workgroup_index(wid, nwg) * {{workgroup_size}}u + lid;
  let i = word * 2u;
  if (i >= params.numel) { return; }
  var hi = 0.0;
  if (i + 1u < params.numel) { hi = bitcast<f32>(In[i + 1u]); }
  Out[word] = f16_word(vec2<f32>(bitcast<f32>(In[i]), hi));
}
