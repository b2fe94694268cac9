// Packs an f32 product [M, N] into up to three f16 outputs [M, w0], [M, w1], [M, w2] that split
// its columns (w0 + w1 + w2 = N). Products whose f16 output has an odd width come here: their
// words straddle rows, so the product kernels write f32 and this pass writes whole words (a
// missing last element is 0). One invocation per output word, over the three in turn.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
struct Params {
  m: u32,
  n: u32,
  split0: u32,  // w0
  split1: u32,  // w0 + w1
  words0: u32,  // words of each output: ceil(M * w / 2)
  words1: u32,
  words2: u32,
  pad: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> In: array<u32>;
@group(0) @binding(2) var<storage, read_write> Out0: array<u32>;
@group(0) @binding(3) var<storage, read_write> Out1: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out2: array<u32>;

// Elements 2 * word and 2 * word + 1 of the output whose columns start at `first`, `width` wide.
fn pair(word: u32, first: u32, width: u32) -> u32 {
  var v = vec2<f32>();
  for (var c = 0u; c < 2u; c++) {
    let e = 2u * word + c;
    if (e < params.m * width) { v[c] = bitcast<f32>(In[(e / width) * params.n + first + e % width]); }
  }
  return f16_word(v);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  var word = wgx_workgroup_index(wid, nwg) * 256u + lid;
  if (word < params.words0) {
    Out0[word] = pair(word, 0u, params.split0);
    return;
  }
  word -= params.words0;
  if (word < params.words1) {
    Out1[word] = pair(word, params.split0, params.split1 - params.split0);
    return;
  }
  word -= params.words1;
  if (word < params.words2) { Out2[word] = pair(word, params.split1, params.n - params.split1); }
}
