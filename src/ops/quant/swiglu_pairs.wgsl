// linear_swiglu's epilogue pass: y [M, N] from the f32 product P [M, 2N] whose columns interleave
// gate and up (gate j at 2j, up j at 2j + 1): y[e] = silu(P[2e]) * P[2e + 1] over the
// flattened elements e (row strides 2N and N line up). One invocation per output word
// ({{per_word}} elements), so packed f16 words never race; a missing last element is 0.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "silu.wgsl"
struct Params {
  numel: u32,  // M * N
  pad0: u32,
  pad1: u32,
  pad2: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> P: array<u32>;
@group(0) @binding(2) var<storage, read_write> Out: array<u32>;

const PW = {{per_word}}u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let w = wgx_workgroup_index(wid, nwg) * 256u + lid;
  if (w * PW >= params.numel) { return; }
  var v = vec2<f32>(0.0, 0.0);
  for (var i = 0u; i < PW; i++) {
    let e = w * PW + i;
    if (e < params.numel) { v[i] = silu(bitcast<f32>(P[2u * e])) * bitcast<f32>(P[2u * e + 1u]); }
  }
  Out[w] = {{pack}};
}
