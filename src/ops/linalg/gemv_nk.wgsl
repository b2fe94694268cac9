// C[b] = A[b] @ B[b]^T (+ bias) for few rows of A (decode), B [N, K] row-major (linear's weight:
// each column of C reads one contiguous row of B). A workgroup computes COLS columns of C for up
// to R rows; TPC invocations share a column, striding over its row of B by vec4s so that
// together they read one contiguous run, and their partial sums are reduced in workgroup memory,
// one row at a time (1 KiB of it: SwiftShader's pipeline compile time grows with its size).
// Any M works (row blocks of R); the route takes it only for M <= R.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "linalg_flags.toml"
struct Params {
  m: u32,
  n: u32,
  k: u32,
  batch: u32,
  tiles_m: u32,  // row blocks: ceil(M / R)
  tiles_n: u32,  // column blocks: ceil(N / COLS)
  flags: u32,    // linalg_flags.toml
  batch_rank: u32,
  batch_dims: array<vec4<u32>, 2>,
  a_strides: array<vec4<u32>, 2>,
  b_strides: array<vec4<u32>, 2>,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> A: array<{{a_word}}>;
@group(0) @binding(2) var<storage, read> B: array<{{b_word}}>;
@group(0) @binding(3) var<storage, read> Bias: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out: array<u32>;

const WG = 256u;
const TPC = {{tpc}}u;  // a power of two
const COLS = WG / TPC;  // even (store_f16 pairs neighbouring columns)
const R = 4u;
const VEC = {{vec}};

var<workgroup> red: array<f32, WG>;

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
  if (VEC) { return a_quad(e); }  // count >= 4: K is a multiple of 4
  var v = vec4<f32>();
  for (var c = 0u; c < min(count, 4u); c++) { v[c] = a_elem(e + c); }
  return v;
}

fn load_b(e: u32, count: u32) -> vec4<f32> {
  if (VEC) { return b_quad(e); }
  var v = vec4<f32>();
  for (var c = 0u; c < min(count, 4u); c++) { v[c] = b_elem(e + c); }
  return v;
}

// Called by the first invocation of each column with its sums (and the next column's), per row.
fn store_f32(sums: vec4<f32>, next: vec4<f32>, n: u32, m0: u32, c_off: u32) {
  if (n >= params.n) { return; }
  for (var r = 0u; r < R; r++) {
    let m = m0 + r;
    if (m < params.m) { Out[c_off + m * params.n + n] = bitcast<u32>(sums[r] + bias(n)); }
  }
}

// Packed f16 with N even: the even column writes the word it shares with the next one.
fn store_f16(sums: vec4<f32>, next: vec4<f32>, n: u32, m0: u32, c_off: u32) {
  if (n >= params.n || (n & 1u) == 1u) { return; }
  for (var r = 0u; r < R; r++) {
    let m = m0 + r;
    if (m < params.m) {
      let pair = vec2<f32>(sums[r] + bias(n), next[r] + bias(n + 1u));
      Out[(c_off + m * params.n + n) >> 1u] = f16_word(pair);
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
  let m0 = ((wg % tiles) / params.tiles_n) * R;
  let n = ((wg % tiles) % params.tiles_n) * COLS + lid / TPC;
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
  let t = lid % TPC;
  var acc = vec4<f32>();  // one sum per row
  if (n < params.n) {
    let row = b_off + n * params.k;
    for (var k = t * 4u; k < params.k; k += TPC * 4u) {
      let w = load_b(row + k, params.k - k);
      for (var r = 0u; r < R; r++) {
        if (m0 + r < params.m) { acc[r] += dot(load_a(a_off + (m0 + r) * params.k + k, params.k - k), w); }
      }
    }
  }
  var sums = vec4<f32>();  // complete at t == 0
  var next = vec4<f32>();  // the next column's, at t == 0 of an even column
  for (var r = 0u; r < R; r++) {
    if (m0 + r >= params.m) { break; }
    workgroupBarrier();
    red[lid] = acc[r];
    for (var s = TPC / 2u; s > 0u; s >>= 1u) {
      workgroupBarrier();
      if (t < s) { red[lid] += red[lid + s]; }
    }
    workgroupBarrier();
    sums[r] = red[lid];
    next[r] = red[min(lid + TPC, WG - 1u)];
  }
  if (t == 0u) { {{store}}(sums, next, n, m0, b * params.m * params.n); }
}
