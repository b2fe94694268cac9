// q4_gemm's pass after its f32 partials P[split][m][n] (splits of them, each m x n): the
// product is their sum plus the bias; linear_swiglu reduces its column pairs to
// silu(column 2j) * column 2j + 1; the output columns are split into up to three outputs
// (linear_qkv) of {{per_word}} element(s) per word. One invocation per output word, over the
// three outputs in turn, so packed f16 words never race (a word may straddle rows); a missing
// last element is 0. With Q8_OUT (f32 only: linear_swiglu feeding the down product's int8 GEMM),
// act is also rounded to int8 in chunks of 32 as q8_chunks.wgsl rounds it (the same values in,
// the same bits out), into Q (the chunks' words) and D (their steps): a workgroup's 256 values
// are whole chunks, since act's width is a multiple of 32.
#include "workgroup.wgsl"
#include "int8_chunk.wgsl"
#include "f16_pack.wgsl"
#include "silu.wgsl"
#include "bias.wgsl"
#include "quant_flags.toml"
struct Params {
  m: u32,
  n: u32,       // product columns
  split0: u32,  // output columns [0, split0) go to Out0, [split0, split1) to Out1, the rest to Out2
  split1: u32,
  words0: u32,  // words of each output
  words1: u32,
  words2: u32,
  flags: u32,
  splits: u32,
  out_n: u32,   // output columns: n, or n / 2 for linear_swiglu
  chunks: u32,  // Q8_OUT: the chunks of 32 act has
  pad1: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> P: array<u32>;
@group(0) @binding(2) var<storage, read> Bias: array<u32>;
@group(0) @binding(3) var<storage, read_write> Out0: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out1: array<u32>;
@group(0) @binding(5) var<storage, read_write> Out2: array<u32>;
@group(0) @binding(6) var<storage, read_write> Q: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> D: array<u32>;

const PW = {{per_word}}u;

fn bias(n: u32) -> f32 { return bias_at(n, (params.flags & BIAS) != 0u, (params.flags & X_F16) != 0u); }

// Column c of row r of the product.
fn product(r: u32, c: u32) -> f32 {
  var v = bias(c);
  var i = r * params.n + c;
  for (var s = 0u; s < params.splits; s++) {
    v += bitcast<f32>(P[i]);
    i += params.m * params.n;
  }
  return v;
}

// Word `word` of the output whose columns start at output column `first`, `width` wide.
fn word_of(word: u32, first: u32, width: u32) -> u32 {
  var v = vec2<f32>(0.0, 0.0);
  for (var i = 0u; i < PW; i++) {
    let e = PW * word + i;
    if (e < params.m * width) {
      let r = e / width;
      let c = first + e % width;
      if ((params.flags & SWIGLU) != 0u) {
        v[i] = silu(product(r, 2u * c)) * product(r, 2u * c + 1u);
      } else {
        v[i] = product(r, c);
      }
    }
  }
  return {{pack}};
}

var<workgroup> act: array<u32, 256>;

// Values 4j .. 4j + 3 of the chunk whose first value in `act` is `e0`.
fn act4(e0: u32, j: u32) -> vec4<f32> {
  let e = e0 + 4u * j;
  return bitcast<vec4<f32>>(vec4<u32>(act[e], act[e + 1u], act[e + 2u], act[e + 3u]));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let first = wgx_workgroup_index(wid, nwg) * 256u;
  var word = first + lid;
  if (PW == 1u && (params.flags & Q8_OUT) != 0u) {
    var y = 0u;
    if (word < params.words0) {
      y = word_of(word, 0u, params.split0);
      Out0[word] = y;
    }
    act[lid] = y;
    workgroupBarrier();
    let chunk = first / 32u + lid;
    if (lid < 8u && chunk < params.chunks) {
      var v: array<vec4<f32>, 8>;
      for (var j = 0u; j < 8u; j++) { v[j] = act4(32u * lid, j); }
      let q = i8_chunk(v);
      Q[2u * chunk] = q.lo;
      Q[2u * chunk + 1u] = q.hi;
      D[chunk] = bitcast<u32>(q.dx);
    }
    return;
  }
  if (word < params.words0) {
    Out0[word] = word_of(word, 0u, params.split0);
    return;
  }
  word -= params.words0;
  if (word < params.words1) {
    Out1[word] = word_of(word, params.split0, params.split1 - params.split0);
    return;
  }
  word -= params.words1;
  if (word < params.words2) { Out2[word] = word_of(word, params.split1, params.out_n - params.split1); }
}
