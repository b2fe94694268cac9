// sum = x + residual and out = sum / sqrt(mean(sum^2) + eps) * weight over rows of n elements
// (the last dim), computed in f32. One workgroup per group of params.group_rows consecutive rows:
// 1, or 2 where rows end inside a word (odd n on packed f16), so that every word written belongs
// to one workgroup. Pass 1 writes sum and reduces the squares of each row of the group; pass 2
// reads back the words this invocation wrote (already rounded to the storage dtype, as an
// unfused add followed by rms_norm would see them) and writes out: {{out_doc}}.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "int8_chunk.wgsl"
struct Params {
  rows: u32,
  n: u32,
  group_rows: u32,  // 1 or 2
  pad0: u32,
  inv_n: f32,
  eps: f32,
  pad1: u32,
  pad2: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read> Res: array<u32>;
@group(0) @binding(3) var<storage, read> W: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out: array<u32>;
@group(0) @binding(5) var<storage, read_write> Sum: array<u32>;
@group(0) @binding(6) var<storage, read_write> D: array<u32>;  // the q8 form's steps

const WG = {{workgroup_size}}u;
const PW = {{per_word}}u;

fn unpack(w: u32, i: u32) -> f32 { return {{unpack}}; }
fn pack(v: vec2<f32>) -> u32 { return {{pack}}; }

var<workgroup> red: array<vec2<f32>, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let first_row = wgx_workgroup_index(wid, nwg) * params.group_rows;
  if (first_row >= params.rows) { return; }  // the same for the whole workgroup
  let begin = first_row * params.n;
  let end = min(first_row + params.group_rows, params.rows) * params.n;

  // Sums of squares of the group's first and second row.
  var acc = vec2<f32>(0.0, 0.0);
  for (var w = begin / PW + lid; w * PW < end; w += WG) {
    var v = vec2<f32>(0.0, 0.0);  // the zero tail past the last row
    for (var k = 0u; k < PW; k++) {
      let e = w * PW + k;
      if (e < end) {
        v[k] = unpack(X[w], e) + unpack(Res[w], e);
      }
    }
    let word = pack(v);
    Sum[w] = word;
    for (var k = 0u; k < PW; k++) {
      let e = w * PW + k;
      let s = unpack(word, e);
      if (e < end) {
        if (e - begin < params.n) { acc.x += s * s; } else { acc.y += s * s; }
      }
    }
  }
  red[lid] = acc;
  workgroupBarrier();
  for (var h = WG / 2u; h > 0u; h >>= 1u) {
    if (lid < h) { red[lid] += red[lid + h]; }
    workgroupBarrier();
  }
  let scale = inverseSqrt(red[0] * params.inv_n + params.eps);

  {{pass2}}
}

// The normalized words of [begin, end) (rows of the group: the first's scale in scale.x).
fn out_words(begin: u32, end: u32, scale: vec2<f32>, lid: u32) {
  for (var w = begin / PW + lid; w * PW < end; w += WG) {
    let word = Sum[w];
    var v = vec2<f32>(0.0, 0.0);
    for (var k = 0u; k < PW; k++) {
      let e = w * PW + k;
      if (e < end) {
        let second = e - begin >= params.n;
        let c = e - begin - select(0u, params.n, second);
        v[k] = unpack(word, e) * select(scale.x, scale.y, second) * unpack(W[c / PW], c);
      }
    }
    Out[w] = pack(v);
  }
}

// The q8 form (one row per group, n a multiple of 32): the normalized row in int8 chunks of 32
// (i8_chunk, from f32: no rounding to x's dtype first), chunk i of the row at Out[8i .. 8i + 7]
// and its step at D[i], rows one after another as q8_chunks.wgsl writes them.
fn out_i8(begin: u32, scale: f32, lid: u32) {
  storageBarrier();  // a chunk's sums were written by other invocations
  for (var c = lid; c < params.n / 32u; c += WG) {
    var v: array<vec4<f32>, 8>;
    for (var j = 0u; j < 32u; j++) {
      let e = begin + 32u * c + j;
      let k = 32u * c + j;
      v[j / 4u][j % 4u] = unpack(Sum[e / PW], e) * scale * unpack(W[k / PW], k);
    }
    let q = i8_chunk(v);
    let i = begin / 32u + c;
    for (var h = 0u; h < 4u; h++) {
      Out[8u * i + h] = q.lo[h];
      Out[8u * i + 4u + h] = q.hi[h];
    }
    D[i] = bitcast<u32>(q.dx);
  }
}
