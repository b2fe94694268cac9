// update_cache: rows input_pos .. input_pos + S - 1 of every (batch, head) of the cache
// [B, H, MaxS, D] take the new values [B, S, H, D], converted to the cache's storage. One
// invocation per cache word written: a row is D / {{per_word}} whole words (D is even for packed
// f16), so no two invocations share a word and the rest of the cache is never touched.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
struct Params {
  words: u32,    // cache words written: B * H * S * D / per_word
  seq: u32,      // S
  heads: u32,    // H
  max_seq: u32,  // MaxS
  pos: u32,      // input_pos
  dim: u32,      // D
  pad0: u32,
  pad1: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Value: array<u32>;
@group(0) @binding(2) var<storage, read_write> Cache: array<u32>;

fn load_value(i: u32) -> f32 { return {{load_value}}; }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let w = wgx_workgroup_index(wid, nwg) * 256u + lid;
  if (w >= params.words) { return; }
  // Consecutive invocations write consecutive words of one cache row.
  let row_words = params.dim / {{per_word}}u;
  let c = w % row_words;
  let row = w / row_words;  // (b * H + h) * S + s
  let s = row % params.seq;
  let bh = row / params.seq;
  let h = bh % params.heads;
  let b = bh / params.heads;
  let src = ((b * params.seq + s) * params.heads + h) * params.dim + c * {{per_word}}u;
  Cache[(bh * params.max_seq + params.pos + s) * row_words + c] = {{store}};
}
