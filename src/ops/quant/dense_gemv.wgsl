// y = x @ W^T (+ bias) for few rows of x (decode) with an f32 or f16 W of any K (linear_qkv's
// dense weights; flag X_F16: x, W, bias and y are f16). The weights are read once for up to R
// rows of x. TPC lanes (params.tpc, a power of two) share a pair of neighbouring columns n, n+1
// and take every TPC-th k, so their loads coalesce whatever the alignment of K; the partial sums
// are reduced in workgroup memory (8 KiB). Output columns are split into up to three tensors.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "bias.wgsl"
#include "quant_flags.toml"
struct Params {
  m: u32,
  n: u32,
  k: u32,
  flags: u32,
  split0: u32,  // columns [0, split0) go to Out0, [split0, split1) to Out1, the rest to Out2
  split1: u32,
  tiles_n: u32,  // column blocks: ceil(N / (2 * WG / TPC))
  tpc: u32,      // lanes per column pair: a power of two, at most 128
  pad0: u32,
  pad1: u32,
  pad2: u32,
  pad3: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read> W: array<u32>;
@group(0) @binding(3) var<storage, read> Bias: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out0: array<u32>;
@group(0) @binding(5) var<storage, read_write> Out1: array<u32>;
@group(0) @binding(6) var<storage, read_write> Out2: array<u32>;

const WG = 256u;
const R = 4u;

var<workgroup> red: array<array<vec4<f32>, 2>, WG>;

fn f16_mode() -> bool { return (params.flags & X_F16) != 0u; }

fn x_at(e: u32) -> f32 {
  if (f16_mode()) { return unpack2x16float(X[e >> 1u])[e & 1u]; }
  return bitcast<f32>(X[e]);
}

fn w_at(e: u32) -> f32 {
  if (f16_mode()) { return unpack2x16float(W[e >> 1u])[e & 1u]; }
  return bitcast<f32>(W[e]);
}

fn bias(n: u32) -> f32 { return bias_at(n, (params.flags & BIAS) != 0u, f16_mode()); }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = wgx_workgroup_index(wid, nwg);
  let tpc = params.tpc;
  let m0 = (wg / params.tiles_n) * R;
  if (m0 >= params.m) { return; }
  let rows = min(R, params.m - m0);
  let n = (wg % params.tiles_n) * (2u * WG / tpc) + 2u * (lid / tpc);
  let n1 = min(n + 1u, params.n - 1u);  // a missing second column repeats the first
  let t = lid % tpc;
  var acc0 = vec4<f32>();
  var acc1 = vec4<f32>();
  if (n < params.n) {
    for (var k = t; k < params.k; k += tpc) {
      let w0 = w_at(n * params.k + k);
      let w1 = w_at(n1 * params.k + k);
      for (var r = 0u; r < R; r++) {
        if (r >= rows) { break; }
        let x = x_at((m0 + r) * params.k + k);
        acc0[r] += w0 * x;
        acc1[r] += w1 * x;
      }
    }
  }
  red[lid] = array<vec4<f32>, 2>(acc0, acc1);
  for (var s = tpc / 2u; s > 0u; s >>= 1u) {
    workgroupBarrier();
    if (t < s) {
      red[lid][0] += red[lid + s][0];
      red[lid][1] += red[lid + s][1];
    }
  }
  if (t != 0u || n >= params.n) { return; }
  let sums = red[lid];  // written last by this invocation
  for (var r = 0u; r < rows; r++) {
    let v0 = sums[0][r] + bias(n);
    if ((params.flags & OUT_F16) != 0u) {
      put2(m0 + r, n, vec2<f32>(v0, sums[1][r] + bias(n + 1u)));  // N even: n + 1 exists
    } else {
      put(m0 + r, n, v0);
      if (n + 1u < params.n) { put(m0 + r, n + 1u, sums[1][r] + bias(n + 1u)); }
    }
  }
}
