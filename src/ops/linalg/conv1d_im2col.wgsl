// conv1d's patch matrix for the im2col_gemm route: Col[b * Lout + lo, ci * K + t] =
// x[b, ci, lo * stride + t * dilation - padding], zero outside [0, L), in f32 whatever x's
// storage. One invocation per element, consecutive invocations along a patch row.
#include "workgroup.wgsl"
struct Params {
  numel: u32,  // N * Lout * Cin * K
  cin: u32,
  l: u32,
  lout: u32,
  k: u32,
  stride: u32,
  padding: u32,
  dilation: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read_write> Col: array<f32>;

fn x_elem(e: u32) -> f32 { return {{x_elem}}; }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = wgx_workgroup_index(wid, nwg) * 256u + lid;
  if (i >= params.numel) { return; }
  let reduction = params.cin * params.k;
  let row = i / reduction;
  let ci = (i % reduction) / params.k;
  let t = i % params.k;
  let lo = row % params.lout;
  let b = row / params.lout;
  let pos = i32(lo * params.stride + t * params.dilation) - i32(params.padding);
  var v = 0.0;
  if (pos >= 0 && u32(pos) < params.l) { v = x_elem((b * params.cin + ci) * params.l + u32(pos)); }
  Col[i] = v;
}
