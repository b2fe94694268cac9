// y = x @ W^T (+ bias), tiled, for W in q4gsw, f32 or f16 (uniform flags pick the formats once
// per K slice, outside the inner loop). Each workgroup computes a 64x64 block of y in BK-deep
// slices: x's slice and W's slice, dequantized to f32, are staged in workgroup memory, and each
// of the 256 invocations accumulates a 4x4 block in f32 (rows 4*ty.., columns 4*tx..: the f16
// output's word pairs stay within one invocation). The next slice is loaded into registers while
// the current one is multiplied. Staged rows are vec4s along k; quad kq of row r sits at
// kq ^ ((r >> 2) & 7) so that the 8 rows a 128-bit access phase reads hit distinct banks.
// q4gsw slices never straddle K (the routes take K a multiple of BK); dense ones may, and read
// zeros past it. Output columns are split into up to three tensors (linear_qkv).
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "q4.wgsl"
#include "bias.wgsl"
#include "quant_flags.toml"
struct Params {
  m: u32,
  n: u32,
  k: u32,
  flags: u32,
  split0: u32,       // columns [0, split0) go to Out0, [split0, split1) to Out1, the rest to Out2
  split1: u32,
  tiles_n: u32,      // column blocks: ceil(N / 64)
  pad0: u32,
  scale_base: u32,   // q4gsw: the first scale's word in W
  group_shift: u32,  // q4gsw: log2(group size)
  groups: u32,       // q4gsw: groups per row
  pad1: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read> W: array<u32>;
@group(0) @binding(3) var<storage, read> Bias: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out0: array<u32>;
@group(0) @binding(5) var<storage, read_write> Out1: array<u32>;
@group(0) @binding(6) var<storage, read_write> Out2: array<u32>;

const WG = 256u;
const BM = 64u;
const BN = 64u;
const BK = {{bk}}u;
const TM = 4u;
const TN = 4u;
const TX = BN / TN;
const QR = BK / 4u;         // vec4s per staged row
const EPT = BM * BK / WG;   // elements each invocation stages per operand and slice
const WPT = EPT / 8u;       // q4gsw words each invocation stages per slice

var<workgroup> As: array<vec4<f32>, BM * QR>;
var<workgroup> Bs: array<vec4<f32>, BN * QR>;

fn slot(r: u32, kq: u32) -> u32 { return r * QR + (kq ^ ((r >> 2u) & 7u)); }

fn x_at(e: u32) -> f32 {
  if ((params.flags & X_F16) != 0u) { return unpack2x16float(X[e >> 1u])[e & 1u]; }
  return bitcast<f32>(X[e]);
}

fn w_at(e: u32) -> f32 {
  if ((params.flags & W_F16) != 0u) { return unpack2x16float(W[e >> 1u])[e & 1u]; }
  return bitcast<f32>(W[e]);
}

fn bias(n: u32) -> f32 { return bias_at(n, (params.flags & BIAS) != 0u, (params.flags & X_F16) != 0u); }

fn q4_scale_word(j: u32) -> u32 { return W[params.scale_base + j]; }
fn scale(i: u32) -> f32 { return q4_scale(i, (params.flags & SCALE_F16) != 0u); }

// Element p of an invocation's share of a dense slice: consecutive invocations take consecutive
// k of a row, so loads coalesce whatever the alignment of K.
fn dense_row(lid: u32, p: u32) -> u32 { return (lid + WG * p) / BK; }
fn dense_k(lid: u32, p: u32) -> u32 { return (lid + WG * p) % BK; }

// Values of the x slice at rows m0.., columns k0.. (zero outside x).
fn fetch_x(lid: u32, m0: u32, k0: u32) -> array<f32, EPT> {
  var v: array<f32, EPT>;
  for (var p = 0u; p < EPT; p++) {
    let m = m0 + dense_row(lid, p);
    let k = k0 + dense_k(lid, p);
    if (m < params.m && k < params.k) { v[p] = x_at(m * params.k + k); }
  }
  return v;
}

fn stage_x(lid: u32, v: array<f32, EPT>) {
  for (var p = 0u; p < EPT; p++) {
    let k = dense_k(lid, p);
    As[slot(dense_row(lid, p), k / 4u)][k % 4u] = v[p];
  }
}

// The 8 weights of a packed word without their scale, elements 0-3 and 4-7 (exact).
fn nibbles(w: u32) -> array<vec4<f32>, 2> {
  return array<vec4<f32>, 2>(placed_nibbles(w) * kPlace, placed_nibbles(w >> 16u) * kPlace);
}

// q4gsw: invocation word p holds 8 consecutive k of one row.
fn q4_row(lid: u32, p: u32) -> u32 { return (lid + WG * p) / (BK / 8u); }
fn q4_k(lid: u32, p: u32) -> u32 { return ((lid + WG * p) % (BK / 8u)) * 8u; }

// Values of the W slice at rows (output columns) n0.., k0.., dequantized (zero outside W).
fn fetch_w(lid: u32, n0: u32, k0: u32) -> array<f32, EPT> {
  var v: array<f32, EPT>;
  if ((params.flags & W_Q4) != 0u) {
    for (var p = 0u; p < WPT; p++) {
      let n = n0 + q4_row(lid, p);
      if (n < params.n) {
        let k = k0 + q4_k(lid, p);
        let s = scale(n * params.groups + (k >> params.group_shift));
        let q = nibbles(W[(n * params.k + k) >> 3u]);
        for (var e = 0u; e < 4u; e++) {
          v[8u * p + e] = q[0][e] * s;
          v[8u * p + 4u + e] = q[1][e] * s;
        }
      }
    }
    return v;
  }
  for (var p = 0u; p < EPT; p++) {
    let n = n0 + dense_row(lid, p);
    let k = k0 + dense_k(lid, p);
    if (n < params.n && k < params.k) { v[p] = w_at(n * params.k + k); }
  }
  return v;
}

fn stage_w(lid: u32, v: array<f32, EPT>) {
  if ((params.flags & W_Q4) != 0u) {
    for (var p = 0u; p < WPT; p++) {
      let r = q4_row(lid, p);
      let kq = q4_k(lid, p) / 4u;
      Bs[slot(r, kq)] = vec4<f32>(v[8u * p], v[8u * p + 1u], v[8u * p + 2u], v[8u * p + 3u]);
      Bs[slot(r, kq + 1u)] = vec4<f32>(v[8u * p + 4u], v[8u * p + 5u], v[8u * p + 6u], v[8u * p + 7u]);
    }
    return;
  }
  for (var p = 0u; p < EPT; p++) {
    let k = dense_k(lid, p);
    Bs[slot(dense_row(lid, p), k / 4u)][k % 4u] = v[p];
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = wgx_workgroup_index(wid, nwg);
  let m0 = (wg / params.tiles_n) * BM;
  let n0 = (wg % params.tiles_n) * BN;
  if (m0 >= params.m) { return; }
  let tx = lid % TX;
  let ty = lid / TX;
  var x_next = fetch_x(lid, m0, 0u);
  var w_next = fetch_w(lid, n0, 0u);
  var acc: array<vec4<f32>, TM>;
  let slices = (params.k + BK - 1u) / BK;
  for (var s = 0u; s < slices; s++) {
    stage_x(lid, x_next);
    stage_w(lid, w_next);
    workgroupBarrier();
    if (s + 1u < slices) {
      x_next = fetch_x(lid, m0, (s + 1u) * BK);
      w_next = fetch_w(lid, n0, (s + 1u) * BK);
    }
    for (var kq = 0u; kq < QR; kq++) {
      var a: array<vec4<f32>, TM>;
      for (var i = 0u; i < TM; i++) { a[i] = As[slot(ty * TM + i, kq)]; }
      for (var j = 0u; j < TN; j++) {
        let b = Bs[slot(tx * TN + j, kq)];
        for (var i = 0u; i < TM; i++) { acc[i][j] += dot(a[i], b); }
      }
    }
    workgroupBarrier();
  }
  let f16 = (params.flags & OUT_F16) != 0u;
  for (var i = 0u; i < TM; i++) {
    let m = m0 + ty * TM + i;
    if (m >= params.m) { break; }
    for (var j = 0u; j < TN; j++) {
      let n = n0 + tx * TN + j;
      if (n >= params.n) { break; }
      if (!f16) {
        put(m, n, acc[i][j] + bias(n));
      } else if (j % 2u == 0u) {  // N even: n + 1 exists
        put2(m, n, vec2<f32>(acc[i][j] + bias(n), acc[i][j + 1u] + bias(n + 1u)));
      }
    }
  }
}
