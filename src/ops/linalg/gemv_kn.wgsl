// C[b] = A[b] @ B[b] for few rows of A (decode), B [K, N] row-major (matmul's right operand: a
// row of B is contiguous along n). A workgroup computes 4*NQ columns of C for up to R rows: NQ
// invocations each take 4 neighbouring columns (vec4 loads, NQ*16 contiguous bytes of a row of
// B), KS groups of them split K, and the KS partial sums are reduced in workgroup memory, one
// row at a time (4 KiB of it: SwiftShader's pipeline compile time grows with its size).
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
  tiles_n: u32,  // column blocks: ceil(N / (4 * NQ))
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
const NQ = {{nq}}u;
const KS = WG / NQ;  // a power of two
const R = 4u;
const VEC = {{vec}};

var<workgroup> red: array<vec4<f32>, WG>;

fn a_elem(e: u32) -> f32 { return {{a_elem}}; }
fn a_quad(e: u32) -> vec4<f32> { return {{a_quad}}; }
fn b_elem(e: u32) -> f32 { return {{b_elem}}; }
fn b_quad(e: u32) -> vec4<f32> { return {{b_quad}}; }

fn bias(n: u32) -> f32 {
  if ((params.flags & BIAS) == 0u) { return 0.0; }
  return {{bias_elem}};
}

// Elements e..e+3 of B, of which the first `count` exist; the rest read as 0.
fn load_b(e: u32, count: u32) -> vec4<f32> {
  if (VEC) { return b_quad(e); }  // count >= 4: N is a multiple of 4
  var v = vec4<f32>();
  for (var c = 0u; c < min(count, 4u); c++) { v[c] = b_elem(e + c); }
  return v;
}

// Called by the invocations of the first K group with the sums of columns n..n+3, per row.
fn store_f32(sums: array<vec4<f32>, R>, n: u32, m0: u32, c_off: u32) {
  for (var r = 0u; r < R; r++) {
    let m = m0 + r;
    if (m >= params.m) { break; }
    for (var c = 0u; c < 4u; c++) {
      if (n + c < params.n) { Out[c_off + m * params.n + n + c] = bitcast<u32>(sums[r][c] + bias(n + c)); }
    }
  }
}

// Packed f16 with N even: columns n..n+3 (n a multiple of 4) are two whole words.
fn store_f16(sums: array<vec4<f32>, R>, n: u32, m0: u32, c_off: u32) {
  for (var r = 0u; r < R; r++) {
    let m = m0 + r;
    if (m >= params.m) { break; }
    for (var c = 0u; c < 4u; c += 2u) {
      if (n + c < params.n) {
        let pair = vec2<f32>(sums[r][c] + bias(n + c), sums[r][c + 1u] + bias(n + c + 1u));
        Out[(c_off + m * params.n + n + c) >> 1u] = f16_word(pair);
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
  let m0 = ((wg % tiles) / params.tiles_n) * R;
  let n = ((wg % tiles) % params.tiles_n) * NQ * 4u + (lid % NQ) * 4u;
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
  let ks = lid / NQ;
  var acc: array<vec4<f32>, R>;
  if (n < params.n) {
    for (var k = ks; k < params.k; k += KS) {
      let v = load_b(b_off + k * params.n + n, params.n - n);
      for (var r = 0u; r < R; r++) {
        if (m0 + r < params.m) { acc[r] += a_elem(a_off + (m0 + r) * params.k + k) * v; }
      }
    }
  }
  var sums: array<vec4<f32>, R>;  // complete in the first K group
  for (var r = 0u; r < R; r++) {
    if (m0 + r >= params.m) { break; }
    workgroupBarrier();
    red[lid] = acc[r];
    for (var s = KS / 2u; s > 0u; s >>= 1u) {
      workgroupBarrier();
      if (ks < s) { red[lid] += red[lid + s * NQ]; }
    }
    workgroupBarrier();
    sums[r] = red[lid];
  }
  if (ks == 0u) { {{store}}(sums, n, m0, b * params.m * params.n); }
}
