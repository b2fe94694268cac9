// x rounded to int8 for q4_gemm's int8 variant: each 32-value chunk of x's rows (K a multiple of
// 32, so chunk i is row i / (K / 32)) becomes i8_chunk's eight words, Q[2i] (lo) and Q[2i + 1]
// (hi), and its step dx, D[i]. One invocation per chunk.
#include "workgroup.wgsl"
#include "int8_chunk.wgsl"
struct Params {
  chunks: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> Q: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> D: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = wgx_workgroup_index(wid, nwg) * 256u + lid;
  if (i >= params.chunks) { return; }
  var v: array<vec4<f32>, 8>;
  {{load}}
  let q = i8_chunk(v);
  Q[2u * i] = q.lo;
  Q[2u * i + 1u] = q.hi;
  D[i] = bitcast<u32>(q.dx);
}
