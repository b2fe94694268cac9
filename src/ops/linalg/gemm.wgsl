// C[b] = A[b] @ B[b] (+ bias) for a batch of matrices, tiled. Each workgroup computes a
// {{bm}}x{{bn}} block of C, staging {{bk}}-deep slices of A and B in workgroup memory; each of the
// 256 invocations accumulates a {{tm}}x{{tn}} block in f32 (rows ty + TY*i, columns tx + TX*j).
// A is [M, K] row-major; B is [N, K] (layout nk: linear's weight) or [K, N] (layout kn: matmul).
// Both are staged K-contiguous, one padded row of vec4s per row of A or column of B, so the inner
// loop is vec4 dot products over k. The next slice is fetched into registers while the current
// one is multiplied.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "linalg_flags.toml"
struct Params {
  m: u32,
  n: u32,
  k: u32,
  batch: u32,
  tiles_m: u32,
  tiles_n: u32,
  flags: u32,  // linalg_flags.toml
  batch_rank: u32,
  batch_dims: array<vec4<u32>, 2>,  // C's batch dims, 4 per vec4
  a_strides: array<vec4<u32>, 2>,   // element strides of A along them (0: broadcast)
  b_strides: array<vec4<u32>, 2>,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> A: array<{{a_word}}>;
@group(0) @binding(2) var<storage, read> B: array<{{b_word}}>;
@group(0) @binding(3) var<storage, read> Bias: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out: array<u32>;

const WG = 256u;
const BM = {{bm}}u;
const BN = {{bn}}u;
const BK = {{bk}}u;  // a multiple of 16 (the kn staging order below)
const TM = {{tm}}u;
const TN = {{tn}}u;
const TX = BN / TN;  // invocations along n; even (store_f16 pairs neighbours)
const TY = BM / TM;
const QR = BK / 4u;  // vec4s of k per staged row
// Staged rows are SR vec4s apart (one of padding): the vec4 reads of 8 neighbouring invocations
// (one 128-bit access phase) then start 20 words apart and cover 32 distinct banks.
const SR = QR + 1u;
const AQ = BM * QR / WG;  // vec4s of A each invocation stages per slice
const BQ = BN * QR / WG;
// Rows of A and B and the length K (and N for kn) are multiples of 4: whole-vector loads.
const VEC = {{vec}};

var<workgroup> As: array<vec4<f32>, BM * SR>;
var<workgroup> Bs: array<vec4<f32>, BN * SR>;

fn a_elem(e: u32) -> f32 { return {{a_elem}}; }
fn a_quad(e: u32) -> vec4<f32> { return {{a_quad}}; }
fn b_elem(e: u32) -> f32 { return {{b_elem}}; }
fn b_quad(e: u32) -> vec4<f32> { return {{b_quad}}; }

fn bias(n: u32) -> f32 {
  if ((params.flags & BIAS) == 0u) { return 0.0; }
  return {{bias_elem}};
}

// Elements e..e+3 of A (B), of which the first `count` exist; the rest read as 0.
fn load_a(e: u32, count: u32) -> vec4<f32> {
  if (VEC) {  // count is a multiple of 4
    if (count == 0u) { return vec4<f32>(); }
    return a_quad(e);
  }
  var v = vec4<f32>();
  for (var c = 0u; c < min(count, 4u); c++) { v[c] = a_elem(e + c); }
  return v;
}

fn load_b(e: u32, count: u32) -> vec4<f32> {
  if (VEC) {
    if (count == 0u) { return vec4<f32>(); }
    return b_quad(e);
  }
  var v = vec4<f32>();
  for (var c = 0u; c < min(count, 4u); c++) { v[c] = b_elem(e + c); }
  return v;
}

// Staging order of a K-contiguous operand: vec4 q of a slice is row kc_row(q), k-quad kc_quad(q).
// A warp covers 8 rows x 4 k-quads, i.e. whole 64-byte row segments, and each 8-invocation phase
// of its vec4 stores writes 8 rows at distinct banks.
fn kc_row(q: u32) -> u32 { return (q % 8u) + 8u * (q / (8u * QR)); }
fn kc_quad(q: u32) -> u32 { return (q / 8u) % QR; }

fn fetch_a(q: u32, m0: u32, k0: u32, off: u32) -> vec4<f32> {
  let m = m0 + kc_row(q);
  let k = k0 + kc_quad(q) * 4u;
  var count = 0u;
  if (m < params.m && k < params.k) { count = params.k - k; }
  return load_a(off + m * params.k + k, count);
}

fn stage_a(q: u32, v: vec4<f32>) { As[kc_row(q) * SR + kc_quad(q)] = v; }

fn fetch_b_nk(q: u32, n0: u32, k0: u32, off: u32) -> vec4<f32> {
  let n = n0 + kc_row(q);
  let k = k0 + kc_quad(q) * 4u;
  var count = 0u;
  if (n < params.n && k < params.k) { count = params.k - k; }
  return load_b(off + n * params.k + k, count);
}

fn stage_b_nk(q: u32, v: vec4<f32>) { Bs[kc_row(q) * SR + kc_quad(q)] = v; }

// Layout kn loads vec4s along n and transposes them into Bs. Vec4 q is k-row kn_k(q), n-quad
// kn_quad(q): 16 invocations take 16 k-rows of one n-quad and the next 16 the neighbouring
// n-quad, so a warp reads whole 32-byte sectors and its scalar stores hit 32 distinct banks.
fn kn_k(q: u32) -> u32 { return (q % 16u) + 16u * ((q / 32u) % (BK / 16u)); }
fn kn_quad(q: u32) -> u32 { return 2u * (q / (2u * BK)) + (q / 16u) % 2u; }

fn fetch_b_kn(q: u32, n0: u32, k0: u32, off: u32) -> vec4<f32> {
  let k = k0 + kn_k(q);
  let n = n0 + kn_quad(q) * 4u;
  var count = 0u;
  if (k < params.k && n < params.n) { count = params.n - n; }
  return load_b(off + k * params.n + n, count);
}

fn stage_b_kn(q: u32, v: vec4<f32>) {
  let k = kn_k(q);
  let n = kn_quad(q) * 4u;
  for (var c = 0u; c < 4u; c++) { Bs[(n + c) * SR + k / 4u][k % 4u] = v[c]; }
}

fn store_f32(acc: array<array<f32, TN>, TM>, m0: u32, n0: u32, c_off: u32, tx: u32, ty: u32) {
  for (var i = 0u; i < TM; i++) {
    let m = m0 + ty + TY * i;
    if (m >= params.m) { break; }
    for (var j = 0u; j < TN; j++) {
      let n = n0 + tx + TX * j;
      if (n < params.n) { Out[c_off + m * params.n + n] = bitcast<u32>(acc[i][j] + bias(n)); }
    }
  }
}

// Packed f16 with N even: a word holds columns n, n+1 of one row, which belong to invocations tx
// and tx+1 (n0 and TX are even). The odd one hands its values over through As (free after the
// last slice) and the even one writes whole words.
fn store_f16(acc: array<array<f32, TN>, TM>, m0: u32, n0: u32, c_off: u32, tx: u32, ty: u32) {
  let odd = (tx & 1u) == 1u;
  let slot = (ty * (TX / 2u) + tx / 2u) * TN;
  for (var i = 0u; i < TM; i++) {
    workgroupBarrier();
    if (odd) {
      for (var j = 0u; j < TN; j++) { As[(slot + j) / 4u][(slot + j) % 4u] = acc[i][j]; }
    }
    workgroupBarrier();
    let m = m0 + ty + TY * i;
    if (!odd && m < params.m) {
      for (var j = 0u; j < TN; j++) {
        let n = n0 + tx + TX * j;
        if (n < params.n) {
          let hi = As[(slot + j) / 4u][(slot + j) % 4u];
          let pair = vec2<f32>(acc[i][j] + bias(n), hi + bias(n + 1u));
          Out[(c_off + m * params.n + n) >> 1u] = f16_word(pair);
        }
      }
    }
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = wgx_workgroup_index(wid, nwg);
  let tiles = params.tiles_m * params.tiles_n;
  if (wg >= tiles * params.batch) { return; }
  let b = wg / tiles;
  let m0 = ((wg % tiles) / params.tiles_n) * BM;
  let n0 = ((wg % tiles) % params.tiles_n) * BN;
  var a_off = 0u;
  var b_off = 0u;
  var rem = b;
  for (var d = params.batch_rank; d > 0u; d--) {
    let q = (d - 1u) / 4u;
    let r = (d - 1u) % 4u;
    let c = rem % params.batch_dims[q][r];
    rem = rem / params.batch_dims[q][r];
    a_off += c * params.a_strides[q][r];
    b_off += c * params.b_strides[q][r];
  }
  let tx = lid % TX;
  let ty = lid / TX;

  var a_next: array<vec4<f32>, AQ>;
  var b_next: array<vec4<f32>, BQ>;
  for (var i = 0u; i < AQ; i++) { a_next[i] = fetch_a(lid + i * WG, m0, 0u, a_off); }
  for (var i = 0u; i < BQ; i++) { b_next[i] = fetch_b_{{layout}}(lid + i * WG, n0, 0u, b_off); }
  var acc: array<array<f32, TN>, TM>;
  let slices = (params.k + BK - 1u) / BK;
  for (var s = 0u; s < slices; s++) {
    for (var i = 0u; i < AQ; i++) { stage_a(lid + i * WG, a_next[i]); }
    for (var i = 0u; i < BQ; i++) { stage_b_{{layout}}(lid + i * WG, b_next[i]); }
    workgroupBarrier();
    if (s + 1u < slices) {
      let k0 = (s + 1u) * BK;
      for (var i = 0u; i < AQ; i++) { a_next[i] = fetch_a(lid + i * WG, m0, k0, a_off); }
      for (var i = 0u; i < BQ; i++) { b_next[i] = fetch_b_{{layout}}(lid + i * WG, n0, k0, b_off); }
    }
    for (var kq = 0u; kq < QR; kq++) {
      var a: array<vec4<f32>, TM>;
      for (var i = 0u; i < TM; i++) { a[i] = As[(ty + TY * i) * SR + kq]; }
      for (var j = 0u; j < TN; j++) {
        let bv = Bs[(tx + TX * j) * SR + kq];
        for (var i = 0u; i < TM; i++) { acc[i][j] += dot(a[i], bv); }
      }
    }
    workgroupBarrier();
  }
  {{store}}(acc, m0, n0, b * params.m * params.n, tx, ty);
}
