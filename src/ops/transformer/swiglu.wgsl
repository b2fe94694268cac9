// out = silu(gate) * up elementwise (silu.wgsl), computed in f32. One invocation writes one
// 32-bit word of the output ({{per_word}} elements), so packed f16 outputs never race; the tail is zero.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "silu.wgsl"
struct Params {
  numel: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Gate: array<u32>;
@group(0) @binding(2) var<storage, read> Up: array<u32>;
@group(0) @binding(3) var<storage, read_write> Out: array<u32>;

const WG = {{workgroup_size}}u;
const PW = {{per_word}}u;

fn unpack(w: u32, i: u32) -> f32 { return {{unpack}}; }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let w = wgx_workgroup_index(wid, nwg) * WG + lid;
  if (w * PW >= params.numel) { return; }
  var v = vec2<f32>(0.0, 0.0);
  for (var k = 0u; k < PW; k++) {
    let i = w * PW + k;
    if (i < params.numel) { v[k] = silu(unpack(Gate[w], i)) * unpack(Up[w], i); }
  }
  Out[w] = {{pack}};
}
