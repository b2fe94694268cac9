// y = x @ W^T (+ bias) for W in q4gsw and many rows of x (prefill): an f32 SIMT GEMM. A
// workgroup of 256 invocations computes a BM x 128 block of the product (BM = {{rows}}) over a
// range of 32-deep K slices. Each slice of x and of W (dequantized) is staged k-major in
// workgroup memory, so that the invocation (tx, ty) = (lid % 16, lid / 16) reads its rows
// 4 ty.. and its columns 4 tx.. and 64 + 4 tx.. as vec4s and keeps TM x 8 sums in registers
// (TM = BM / 16 = 4). The next slice's words are loaded into
// registers while the current one is multiplied. A q4gsw slice lies within one group, so each
// of W's rows has one scale per slice.
// Split-K: workgroup (split, tile) takes the slices [split * chunk, (split + 1) * chunk). With
// PARTIAL set, it writes its sums (no bias) to Out0 as the f32 partials P[split][m][n], which
// q4_gemm_reduce.wgsl adds up and finishes; otherwise (one split) the epilogue writes y itself:
// bias, f16 in word pairs (every output width even), linear_qkv's column split into up to three
// outputs, or linear_swiglu's gate/up pairs (columns 2j, 2j + 1 -> output column j).
// The int8 variant (q4_gemm.i8.m64) takes x as q8_chunks.wgsl rounded it (int8 in chunks of 32 with
// one step each, the steps from word params.xd_base of X) and turns W's nibbles into int8 (q - 8)
// while staging: a slice is then 8 words per row and per column, and each invocation keeps
// TM x 8 integer sums, four products per dot4I8Packed (exact in i32: |sum| <= 32 * 127 * 8),
// which it scales by x's and W's steps into its f32 sums once per slice. A stage holds 4
// slices, loaded in runs along K while the one before is multiplied.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "silu.wgsl"
#include "q4.wgsl"
#include "bias.wgsl"
#include "quant_flags.toml"
struct Params {
  m: u32,
  n: u32,            // product columns
  k: u32,            // a multiple of 32
  flags: u32,
  split0: u32,       // output columns [0, split0) go to Out0, [split0, split1) to Out1, the rest to Out2
  split1: u32,
  out_n: u32,        // output columns: n, or n / 2 for linear_swiglu
  tiles_n: u32,      // column blocks: ceil(n / 128)
  tiles_m: u32,      // row blocks: ceil(m / BM)
  chunk: u32,        // slices per split
  splits: u32,
  scale_base: u32,   // the first scale's word in S
  group_shift: u32,  // log2(group size)
  groups: u32,       // groups per row: k / group size
  xd_base: u32,     // int8 x: the word of X where the steps begin
  pad1: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> W: array<vec2<u32>>;  // the packed nibbles
@group(0) @binding(3) var<storage, read> S: array<u32>;        // the same tensor, for its scales
@group(0) @binding(4) var<storage, read> Bias: array<u32>;
@group(0) @binding(5) var<storage, read_write> Out0: array<u32>;
@group(0) @binding(6) var<storage, read_write> Out1: array<u32>;
@group(0) @binding(7) var<storage, read_write> Out2: array<u32>;

// The fields fixed per product (n, k, flags, out_n, group_shift, groups, tiles_n) are read
// through g_<field>(), which the prelude declares (ops::FixedParams): pipeline constants, so that
// the driver compiles the kernel for one product.

const WG = 256u;
const BM = {{rows}}u;
const BN = 128u;
const BK = 32u;
const TM = BM / 16u;  // rows per invocation: 4 (gemm_f32 runs at BM = 64 only)
const AQ = BM / 4u;   // vec4s per k of As
const BQ = BN / 4u;   // vec4s per k of Bs
const XL = BM / 32u;  // vec4<u32> loads of x per invocation and slice (f32 x; f16 x takes half)

var<workgroup> As: array<vec4<f32>, BK * AQ>;  // As[k * AQ + r / 4][r % 4]: x[m0 + r, k0 + k]
var<workgroup> Bs: array<vec4<f32>, BK * BQ>;  // Bs[k * BQ + c / 4][c % 4]: W[n0 + c, k0 + k]

// The next slice's words: x's (up to XL vec4s of raw f32 or f16 words), W's (16 nibbles of one
// row) and that row's scale. Scalars and unrolled code only, so they all stay in registers.
var<private> x0: vec4<u32>;
var<private> x1: vec4<u32>;
var<private> x2: vec4<u32>;
var<private> x3: vec4<u32>;
var<private> wr: vec2<u32>;
var<private> sc: f32;

fn q4_scale_word(j: u32) -> u32 { return S[params.scale_base + j]; }
fn scale(i: u32) -> f32 { return q4_scale(i, (g_flags() & SCALE_F16) != 0u); }

fn bias(n: u32) -> f32 { return bias_at(n, (g_flags() & BIAS) != 0u && n < g_n(), (g_flags() & X_F16) != 0u); }

// x's vec4 loads per invocation and slice: XL of 4 f32, or XL / 2 of 8 f16.
fn x_loads() -> u32 { return select(XL, XL / 2u, (g_flags() & X_F16) != 0u); }
// Elements per load: 4 (f32) or 8 (f16), 1 << x_shift().
fn x_shift() -> u32 { return select(2u, 3u, (g_flags() & X_F16) != 0u); }

// Load p of x's slice at k0: v = lid + WG p holds 4 or 8 elements along k of row v % BM, so a
// warp's stores to As hit consecutive rows; rows past m (and W's rows past n) are read clamped
// and never written out.
fn x_load(lid: u32, p: u32, m0: u32, k0: u32) -> vec4<u32> {
  let v = lid + WG * p;
  let e = min(m0 + v % BM, params.m - 1u) * g_k() + k0 + ((v / BM) << x_shift());
  return X[e >> x_shift()];
}

// Loads the slice at k0 into registers. W: row lid % BN, the half lid / BN of its 16 bytes.
fn load(lid: u32, m0: u32, n0: u32, k0: u32) {
  let loads = x_loads();
  x0 = x_load(lid, 0u, m0, k0);
  if (loads > 1u) { x1 = x_load(lid, 1u, m0, k0); }
  if (loads > 2u) { x2 = x_load(lid, 2u, m0, k0); }
  if (loads > 3u) { x3 = x_load(lid, 3u, m0, k0); }
  let n = min(n0 + lid % BN, g_n() - 1u);
  wr = W[((n * g_k() + k0) >> 4u) + lid / BN];
  sc = scale(n * g_groups() + (k0 >> g_group_shift()));
}

// x[m0 + r, k0 + k..k + 3] = v.
fn put_x(r: u32, k: u32, v: vec4<f32>) {
  let q = r / 4u;
  let c = r % 4u;
  As[k * AQ + q][c] = v.x;
  As[(k + 1u) * AQ + q][c] = v.y;
  As[(k + 2u) * AQ + q][c] = v.z;
  As[(k + 3u) * AQ + q][c] = v.w;
}

// W[n0 + r, k0 + k..k + 3] = v.
fn put_w(r: u32, k: u32, v: vec4<f32>) {
  let q = r / 4u;
  let c = r % 4u;
  Bs[k * BQ + q][c] = v.x;
  Bs[(k + 1u) * BQ + q][c] = v.y;
  Bs[(k + 2u) * BQ + q][c] = v.z;
  Bs[(k + 3u) * BQ + q][c] = v.w;
}

fn stage_x(lid: u32, p: u32, w: vec4<u32>) {
  let v = lid + WG * p;
  let k = (v / BM) << x_shift();
  if ((g_flags() & X_F16) != 0u) {
    put_x(v % BM, k, vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)));
    put_x(v % BM, k + 4u, vec4<f32>(unpack2x16float(w.z), unpack2x16float(w.w)));
  } else {
    put_x(v % BM, k, bitcast<vec4<f32>>(w));
  }
}

// The 4 weights of a half-word: (q - 8) * 2^s (placed_nibbles) times the scale times 2^-s
// (exact), one rounding, as (q - 8) * scale would be.
fn weights4(h: u32, sp: vec4<f32>) -> vec4<f32> { return placed_nibbles(h) * sp; }

// Writes the registers' slice into As and Bs (W dequantized).
fn stage(lid: u32) {
  let loads = x_loads();
  stage_x(lid, 0u, x0);
  if (loads > 1u) { stage_x(lid, 1u, x1); }
  if (loads > 2u) { stage_x(lid, 2u, x2); }
  if (loads > 3u) { stage_x(lid, 3u, x3); }
  let r = lid % BN;
  let k = 16u * (lid / BN);
  let sp = kPlace * sc;
  put_w(r, k, weights4(wr.x, sp));
  put_w(r, k + 4u, weights4(wr.x >> 16u, sp));
  put_w(r, k + 8u, weights4(wr.y, sp));
  put_w(r, k + 12u, weights4(wr.y >> 16u, sp));
}

// The sums v of row m, product columns n..n + 3 (n a multiple of 4).
fn finish(split: u32, m: u32, n: u32, v: vec4<f32>) {
  if (m >= params.m || n >= g_n()) { return; }
  if ((g_flags() & PARTIAL) != 0u) {
    let base = (split * params.m + m) * g_n() + n;
    Out0[base] = bitcast<u32>(v.x);
    if (n + 1u < g_n()) { Out0[base + 1u] = bitcast<u32>(v.y); }
    if (n + 2u < g_n()) { Out0[base + 2u] = bitcast<u32>(v.z); }
    if (n + 3u < g_n()) { Out0[base + 3u] = bitcast<u32>(v.w); }
    return;
  }
  let y = v + vec4<f32>(bias(n), bias(n + 1u), bias(n + 2u), bias(n + 3u));
  let f16 = (g_flags() & OUT_F16) != 0u;
  if ((g_flags() & SWIGLU) != 0u) {
    let o = vec2<f32>(silu(y.x) * y.y, silu(y.z) * y.w);
    let j = n / 2u;
    if (f16) {  // out_n even: g_n() is a multiple of 4, so all four columns exist
      put2(m, j, o);
    } else {
      put(m, j, o.x);
      if (j + 1u < g_out_n()) { put(m, j + 1u, o.y); }
    }
    return;
  }
  if (f16) {  // n even
    put2(m, n, y.xy);
    if (n + 2u < g_n()) { put2(m, n + 2u, y.zw); }
    return;
  }
  put(m, n, y.x);
  if (n + 1u < g_n()) { put(m, n + 1u, y.y); }
  if (n + 2u < g_n()) { put(m, n + 2u, y.z); }
  if (n + 3u < g_n()) { put(m, n + 3u, y.w); }
}

// The f32 product of workgroup `t`'s tile.
fn gemm_f32(lid: u32, t: Tile) {
  let split = t.split;
  let m0 = t.m0;
  let n0 = t.n0;
  let first = t.first;
  let last = t.last;
  let tx = lid % 16u;
  let ty = lid / 16u;
  // c<i><h>: row 4 ty + i, columns 4 tx.. (h = 0) or 64 + 4 tx.. (h = 1).
  var c00 = vec4<f32>(0.0);
  var c01 = vec4<f32>(0.0);
  var c10 = vec4<f32>(0.0);
  var c11 = vec4<f32>(0.0);
  var c20 = vec4<f32>(0.0);
  var c21 = vec4<f32>(0.0);
  var c30 = vec4<f32>(0.0);
  var c31 = vec4<f32>(0.0);
  if (first < last) { load(lid, m0, n0, first * BK); }
  for (var s = first; s < last; s++) {
    workgroupBarrier();
    stage(lid);
    workgroupBarrier();
    if (s + 1u < last) { load(lid, m0, n0, (s + 1u) * BK); }
    for (var k = 0u; k < BK; k++) {
      let b0 = Bs[k * BQ + tx];
      let b1 = Bs[k * BQ + 16u + tx];
      let a0 = As[k * AQ + ty];
      c00 = fma(vec4<f32>(a0.x), b0, c00);
      c01 = fma(vec4<f32>(a0.x), b1, c01);
      c10 = fma(vec4<f32>(a0.y), b0, c10);
      c11 = fma(vec4<f32>(a0.y), b1, c11);
      c20 = fma(vec4<f32>(a0.z), b0, c20);
      c21 = fma(vec4<f32>(a0.z), b1, c21);
      c30 = fma(vec4<f32>(a0.w), b0, c30);
      c31 = fma(vec4<f32>(a0.w), b1, c31);
    }
  }
  let r = m0 + 4u * ty;
  let n = n0 + 4u * tx;
  finish(split, r, n, c00);
  finish(split, r, n + 64u, c01);
  finish(split, r + 1u, n, c10);
  finish(split, r + 1u, n + 64u, c11);
  finish(split, r + 2u, n, c20);
  finish(split, r + 2u, n + 64u, c21);
  finish(split, r + 3u, n, c30);
  finish(split, r + 3u, n + 64u, c31);
}

// int8: a stage holds FD slices of the tile's rows of x and columns of W, loaded in runs along K
// (each row and column holds its FD slices together: a warp's load covers a few rows or
// columns, not a lane each) into registers while the previous stage is multiplied, then stored
// in each variant's layout; the steps of x and the scales of W go to Ad[j * AQ + r / 4][r % 4]
// and Bd[j * BQ + c / 4][c % 4] (slice j, row r, column c) in both.
const FD = 4u;       // slices a stage
const FH = 2u * FD;  // half slices a stage
const BW = 8u;       // words of a row or column in a slice
var<workgroup> Ad: array<vec4<f32>, FD * AQ>;
var<workgroup> Bd: array<vec4<f32>, FD * BQ>;
var<private> fw0: vec2<u32>;  // the next stage: 4 pieces of W (8 bytes: half a slice each)
var<private> fw1: vec2<u32>;
var<private> fw2: vec2<u32>;
var<private> fw3: vec2<u32>;
var<private> gx0: vec4<u32>;  // half slices v = lid and lid + WG of x (up to BM * FH of them)
var<private> gx1: vec4<u32>;
var<private> fdx: f32;        // a step of x (lid < BM * FD)
var<private> fs0: f32;        // 2 scales of W
var<private> fs1: f32;

// Piece p of W at slice s: half slice v % FH of column v / FH, v = lid + WG p.
fn w_piece(lid: u32, p: u32, n0: u32, s: u32, last: u32, old: vec2<u32>) -> vec2<u32> {
  let v = lid + WG * p;
  let n = min(n0 + v / FH, g_n() - 1u);
  if (s + (v % FH) / 2u >= last) { return old; }
  return W[((n * g_k() + s * BK) >> 4u) + v % FH];
}

// Scale p of W at slice s: slice v % FD of column v / FD.
fn w_scale(lid: u32, p: u32, n0: u32, s: u32, last: u32, old: f32) -> f32 {
  let v = lid + WG * p;
  let n = min(n0 + v / FD, g_n() - 1u);
  if (s + v % FD >= last) { return old; }
  return scale(n * g_groups() + (((s + v % FD) * BK) >> g_group_shift()));
}

// Half slice v % FH of x's row v / FH (of the tile) at slice s.
fn x_half(m0: u32, v: u32, s: u32, last: u32, old: vec4<u32>) -> vec4<u32> {
  let m = min(m0 + v / FH, params.m - 1u);
  if (v >= BM * FH || s + (v % FH) / 2u >= last) { return old; }
  return X[2u * (m * (g_k() / BK) + s) + v % FH];
}

fn load_stage(lid: u32, m0: u32, n0: u32, s: u32, last: u32) {
  fw0 = w_piece(lid, 0u, n0, s, last, fw0);
  fw1 = w_piece(lid, 1u, n0, s, last, fw1);
  fw2 = w_piece(lid, 2u, n0, s, last, fw2);
  fw3 = w_piece(lid, 3u, n0, s, last, fw3);
  gx0 = x_half(m0, lid, s, last, gx0);
  gx1 = x_half(m0, lid + WG, s, last, gx1);
  if (lid < BM * FD) {
    let f = params.xd_base + min(m0 + lid / FD, params.m - 1u) * (g_k() / BK) + s + lid % FD;
    if (s + lid % FD < last) { fdx = bitcast<f32>(X[f >> 2u][f & 3u]); }
  }
  fs0 = w_scale(lid, 0u, n0, s, last, fs0);
  fs1 = w_scale(lid, 1u, n0, s, last, fs1);
}

// Scale p into Bd.
fn put_scale(lid: u32, p: u32, d: f32) {
  let v = lid + WG * p;
  let c = v / FD;
  Bd[(v % FD) * BQ + c / 4u][c % 4u] = d;
}

// The steps of x and the scales of W into Ad and Bd.
fn put_steps(lid: u32) {
  if (lid < BM * FD) { Ad[(lid % FD) * AQ + (lid / FD) / 4u][(lid / FD) % 4u] = fdx; }
  put_scale(lid, 0u, fs0);
  put_scale(lid, 1u, fs1);
}

// A weight word's nibbles q as int8 q - 8, even elements then odd (w & 0x0f0f0f0f's byte order
// and (w >> 4)'s): each byte b + 0x78 stays below 0x100, and flipping its bit 7 leaves b - 8 in
// two's complement.
fn signed_nibbles(w: u32) -> vec2<u32> {
  return ((vec2<u32>(w, w >> 4u) & vec2<u32>(0x0f0f0f0fu)) + vec2<u32>(0x78787878u)) ^ vec2<u32>(0x80808080u);
}

// The 64-row tiles' layout: Aq[(j * BW + w) * AQ + r / 4][r % 4]: word w of slice j of x's row
// m0 + r; Bq likewise for W's column n0 + c (as int8).
var<workgroup> Aq: array<vec4<u32>, FD * BW * AQ>;
var<workgroup> Bq: array<vec4<u32>, FD * BW * BQ>;

// Piece p of W (half slice e of column c: int8 words 4 (e % 2) .. + 3 of slice e / 2).
fn deep_put_w(lid: u32, p: u32, w: vec2<u32>) {
  let v = lid + WG * p;
  let c = v / FH;
  let e = v % FH;
  let lo = signed_nibbles(w.x);
  let hi = signed_nibbles(w.y);
  let b = ((e / 2u) * BW + 4u * (e % 2u)) * BQ + c / 4u;
  Bq[b][c % 4u] = lo.x;
  Bq[b + BQ][c % 4u] = lo.y;
  Bq[b + 2u * BQ][c % 4u] = hi.x;
  Bq[b + 3u * BQ][c % 4u] = hi.y;
}

fn deep_put_x(v: u32, x: vec4<u32>) {
  let r = v / FH;
  let e = v % FH;
  let b = ((e / 2u) * BW + 4u * (e % 2u)) * AQ + r / 4u;
  for (var i = 0u; i < 4u; i++) { Aq[b + i * AQ][r % 4u] = x[i]; }
}

fn deep_stage(lid: u32) {
  deep_put_w(lid, 0u, fw0);
  deep_put_w(lid, 1u, fw1);
  deep_put_w(lid, 2u, fw2);
  deep_put_w(lid, 3u, fw3);
  deep_put_x(lid, gx0);
  deep_put_x(lid + WG, gx1);
  put_steps(lid);
}

fn dot4(a: u32, b: vec4<u32>) -> vec4<i32> {
  return vec4<i32>(dot4I8Packed(a, b.x), dot4I8Packed(a, b.y), dot4I8Packed(a, b.z), dot4I8Packed(a, b.w));
}

// The int8 product of workgroup `t`'s tile (BM = 64: 4 rows by 8 columns per invocation).
fn gemm_i8(lid: u32, t: Tile) {
  let tx = lid % 16u;
  let ty = lid / 16u;
  var c00 = vec4<f32>(0.0);
  var c01 = vec4<f32>(0.0);
  var c10 = vec4<f32>(0.0);
  var c11 = vec4<f32>(0.0);
  var c20 = vec4<f32>(0.0);
  var c21 = vec4<f32>(0.0);
  var c30 = vec4<f32>(0.0);
  var c31 = vec4<f32>(0.0);
  if (t.first < t.last) { load_stage(lid, t.m0, t.n0, t.first, t.last); }
  for (var s = t.first; s < t.last; s += FD) {
    workgroupBarrier();
    deep_stage(lid);
    workgroupBarrier();
    if (s + FD < t.last) { load_stage(lid, t.m0, t.n0, s + FD, t.last); }
    let slices = min(FD, t.last - s);
    for (var j = 0u; j < slices; j++) {
      var s00 = vec4<i32>();
      var s01 = vec4<i32>();
      var s10 = vec4<i32>();
      var s11 = vec4<i32>();
      var s20 = vec4<i32>();
      var s21 = vec4<i32>();
      var s30 = vec4<i32>();
      var s31 = vec4<i32>();
      for (var w = 0u; w < BW; w++) {
        let a = Aq[(j * BW + w) * AQ + ty];
        let b0 = Bq[(j * BW + w) * BQ + tx];
        let b1 = Bq[(j * BW + w) * BQ + 16u + tx];
        s00 += dot4(a.x, b0);
        s01 += dot4(a.x, b1);
        s10 += dot4(a.y, b0);
        s11 += dot4(a.y, b1);
        s20 += dot4(a.z, b0);
        s21 += dot4(a.z, b1);
        s30 += dot4(a.w, b0);
        s31 += dot4(a.w, b1);
      }
      let da = Ad[j * AQ + ty];
      let d0 = Bd[j * BQ + tx];
      let d1 = Bd[j * BQ + 16u + tx];
      c00 = fma(vec4<f32>(s00), da.x * d0, c00);
      c01 = fma(vec4<f32>(s01), da.x * d1, c01);
      c10 = fma(vec4<f32>(s10), da.y * d0, c10);
      c11 = fma(vec4<f32>(s11), da.y * d1, c11);
      c20 = fma(vec4<f32>(s20), da.z * d0, c20);
      c21 = fma(vec4<f32>(s21), da.z * d1, c21);
      c30 = fma(vec4<f32>(s30), da.w * d0, c30);
      c31 = fma(vec4<f32>(s31), da.w * d1, c31);
    }
  }
  let r = t.m0 + 4u * ty;
  let n = t.n0 + 4u * tx;
  finish(t.split, r, n, c00);
  finish(t.split, r, n + 64u, c01);
  finish(t.split, r + 1u, n, c10);
  finish(t.split, r + 1u, n + 64u, c11);
  finish(t.split, r + 2u, n, c20);
  finish(t.split, r + 2u, n + 64u, c21);
  finish(t.split, r + 3u, n, c30);
  finish(t.split, r + 3u, n + 64u, c31);
}

// The int8 product of workgroup `t`'s tile for BM = 16 (few rows: continuous batching's steps).
// Few rows reuse each weight little, so the tile is bound by how it reads W: the stage (as
// load_stage loads it) keeps each column's words as int8 (turned so once, as the 64-row tiles
// do) with its half slices rotated by its column quad, so that the lanes reading one half slice
// of neighbouring quads hit distinct banks; x by row and half slice.
// Invocation (q, g) = (lid % 32, lid / 32) then takes columns n0 + 4q .. + 3 of rows m0 + 2g,
// m0 + 2g + 1. Each sum goes through the same operations in the same order as gemm_i8's (exact
// integer sums per slice, then one fma with the same steps per slice), so a row's output is the
// same bits in either variant under the same split of K.
var<workgroup> Fw: array<vec4<u32>, BN * FH>;  // column c, half slice e at c * FH + (e + c / 4) % FH
var<workgroup> Fx: array<vec4<u32>, BM * FH>;  // row r, half slice e: r * FH + e

// Piece p into the stage as int8 words (deep_put_w's order for that half slice).
fn few_put(lid: u32, p: u32, w: vec2<u32>) {
  let v = lid + WG * p;
  let c = v / FH;
  Fw[c * FH + (v % FH + c / 4u) % FH] = vec4<u32>(signed_nibbles(w.x), signed_nibbles(w.y));
}

fn few_stage(lid: u32) {
  few_put(lid, 0u, fw0);
  few_put(lid, 1u, fw1);
  few_put(lid, 2u, fw2);
  few_put(lid, 3u, fw3);
  if (lid < BM * FH) { Fx[lid] = gx0; }
  put_steps(lid);
}

struct Words { a: vec4<u32>, b: vec4<u32> }  // a slice's 8 words of one row or column, as int8

// Column c's slice j from the stage (the words in deep_put_w's order).
fn few_weights(c: u32, j: u32) -> Words {
  return Words(Fw[c * FH + (2u * j + c / 4u) % FH], Fw[c * FH + (2u * j + 1u + c / 4u) % FH]);
}

fn dot8(x: Words, w: Words) -> i32 {
  return dot4I8Packed(x.a.x, w.a.x) + dot4I8Packed(x.a.y, w.a.y) + dot4I8Packed(x.a.z, w.a.z) +
         dot4I8Packed(x.a.w, w.a.w) + dot4I8Packed(x.b.x, w.b.x) + dot4I8Packed(x.b.y, w.b.y) +
         dot4I8Packed(x.b.z, w.b.z) + dot4I8Packed(x.b.w, w.b.w);
}

// Row r's (of the tile) sums of slice j against four columns' words, scaled by its step and the
// columns' d, accumulated into c.
fn few_row(r: u32, j: u32, w0: Words, w1: Words, w2: Words, w3: Words, d: vec4<f32>, c: vec4<f32>) -> vec4<f32> {
  let x = Words(Fx[r * FH + 2u * j], Fx[r * FH + 2u * j + 1u]);
  let sums = vec4<i32>(dot8(x, w0), dot8(x, w1), dot8(x, w2), dot8(x, w3));
  return fma(vec4<f32>(sums), Ad[j * AQ + r / 4u][r % 4u] * d, c);
}

fn gemm_i8_m16(lid: u32, t: Tile) {
  let q = lid % 32u;
  let r = 2u * (lid / 32u);
  let busy = t.m0 + r < params.m;  // the same for a whole warp
  var c0 = vec4<f32>(0.0);
  var c1 = vec4<f32>(0.0);
  if (t.first < t.last) { load_stage(lid, t.m0, t.n0, t.first, t.last); }
  for (var s = t.first; s < t.last; s += FD) {
    workgroupBarrier();
    few_stage(lid);
    workgroupBarrier();
    if (s + FD < t.last) { load_stage(lid, t.m0, t.n0, s + FD, t.last); }
    if (busy) {
      let slices = min(FD, t.last - s);
      for (var j = 0u; j < slices; j++) {
        let w0 = few_weights(4u * q, j);
        let w1 = few_weights(4u * q + 1u, j);
        let w2 = few_weights(4u * q + 2u, j);
        let w3 = few_weights(4u * q + 3u, j);
        let d = Bd[j * BQ + q];
        c0 = few_row(r, j, w0, w1, w2, w3, d, c0);
        c1 = few_row(r + 1u, j, w0, w1, w2, w3, d, c1);
      }
    }
  }
  finish(t.split, t.m0 + r, t.n0 + 4u * q, c0);
  finish(t.split, t.m0 + r + 1u, t.n0 + 4u * q, c1);
}

// Workgroup wg's tile: its split of K, first row and column, and slices [first, last).
struct Tile { split: u32, m0: u32, n0: u32, first: u32, last: u32 }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = wgx_workgroup_index(wid, nwg);
  let tiles = params.tiles_m * g_tiles_n();
  let split = wg / tiles;
  if (split >= params.splits) { return; }
  let first = split * params.chunk;
  let t = Tile(split, ((wg % tiles) / g_tiles_n()) * BM, ((wg % tiles) % g_tiles_n()) * BN, first,
               min(first + params.chunk, g_k() / BK));
  {{gemm}}(lid, t);
}
