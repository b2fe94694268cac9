// conv1d's product for the im2col_gemm route: out[b, co, lo] = bias[co] + sum over r of
// W[co, r] * Col[b * Lout + lo, r], r < R = Cin * K (the weight [Cout, Cin, K] read as
// [Cout, R]). Each workgroup computes a 64 x 64 tile of (co, column j = b * Lout + lo), staging
// 16-deep slices of W and Col in workgroup memory; each of the 256 invocations sums a 4 x 4 block
// in f32 (rows ty + 16 i, columns tx + 16 j). The store writes f32 straight into the [N, Cout,
// Lout] layout, neighbouring invocations at neighbouring positions: the output (for f32
// storage) or a scratch that a pack pass turns into f16.
// A kernel of its own rather than the linear GEMM (gemm.wgsl) through a view: that one adds its
// bias along columns and writes [columns, rows], which here would be [N * Lout, Cout], a transpose
// pass away from conv1d's layout.
#include "workgroup.wgsl"
#include "linalg_flags.toml"
#include "bias.wgsl"
struct Params {
  cout: u32,
  columns: u32,  // N * Lout
  r: u32,        // Cin * K
  lout: u32,
  tiles_n: u32,  // column tiles
  flags: u32,    // linalg_flags.toml
  pad0: u32,
  pad1: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> W: array<u32>;
@group(0) @binding(2) var<storage, read> Col: array<f32>;
@group(0) @binding(3) var<storage, read> Bias: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out: array<f32>;

const WG = 256u;
const BM = 64u;  // rows (output channels) per tile
const BN = 64u;  // columns (positions) per tile
const BK = 16u;
const TM = 4u;
const TN = 4u;
const T = 16u;        // invocations along each side: BM / TM = BN / TN
const SP = BM + 1u;   // staged slice stride: one of padding against bank conflicts
const LOADS = BM * BK / WG;  // elements of W (and of Col) each invocation stages per slice

var<workgroup> Ws: array<f32, BK * SP>;  // [k][row]
var<workgroup> Cs: array<f32, BK * SP>;  // [k][column]

fn w_elem(e: u32) -> f32 { return {{w_elem}}; }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = wgx_workgroup_index(wid, nwg);
  let m0 = (wg / params.tiles_n) * BM;
  let n0 = (wg % params.tiles_n) * BN;
  if (m0 >= params.cout) { return; }  // the whole workgroup leaves: no barrier is skipped
  let tx = lid % T;
  let ty = lid / T;
  var acc: array<array<f32, TN>, TM>;
  for (var i = 0u; i < TM; i++) {
    for (var j = 0u; j < TN; j++) { acc[i][j] = 0.0; }
  }
  for (var k0 = 0u; k0 < params.r; k0 += BK) {
    // Element e of a slice is row (or column) e / BK, depth e % BK: a run of 16 consecutive
    // invocations reads 16 consecutive words of one row.
    for (var s = 0u; s < LOADS; s++) {
      let e = lid + s * WG;
      let row = e / BK;
      let kk = e % BK;
      let k = k0 + kk;
      var wv = 0.0;
      if (m0 + row < params.cout && k < params.r) { wv = w_elem((m0 + row) * params.r + k); }
      Ws[kk * SP + row] = wv;
      var cv = 0.0;
      if (n0 + row < params.columns && k < params.r) { cv = Col[(n0 + row) * params.r + k]; }
      Cs[kk * SP + row] = cv;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      var a: array<f32, TM>;
      for (var i = 0u; i < TM; i++) { a[i] = Ws[kk * SP + ty + T * i]; }
      for (var j = 0u; j < TN; j++) {
        let c = Cs[kk * SP + tx + T * j];
        for (var i = 0u; i < TM; i++) { acc[i][j] += a[i] * c; }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < TM; i++) {
    let co = m0 + ty + T * i;
    if (co >= params.cout) { break; }
    let bias = bias_at(co, (params.flags & BIAS) != 0u, {{f16}});
    for (var j = 0u; j < TN; j++) {
      let col = n0 + tx + T * j;
      if (col < params.columns) {
        let b = col / params.lout;
        Out[(b * params.cout + co) * params.lout + col % params.lout] = acc[i][j] + bias;
      }
    }
  }
}
