// out[i, :] = dequantized row ids[i] of a q4gsw table [V, D], in the output's dtype (the scale
// dtype unless the node asks for another). One invocation takes one packed word (8 consecutive
// elements of a row, under one scale) and writes 8 f32 or 4 f16 words: D is a multiple of 32, so
// f16 rows are whole words. An id outside [0, V) yields a
// row of zeros, as the dense gather does: a shader cannot raise PyTorch's index error, and it
// must never read outside the table.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "q4.wgsl"
#include "quant_flags.toml"
struct Params {
  words: u32,  // packed words to expand: ids * D / 8
  dim: u32,    // D
  rows: u32,   // V
  flags: u32,
  scale_base: u32,   // the first scale's word in Table
  group_shift: u32,  // log2(group size)
  groups: u32,       // groups per row
  pad: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Table: array<u32>;
@group(0) @binding(2) var<storage, read> Ids: array<u32>;
@group(0) @binding(3) var<storage, read_write> Out: array<u32>;

fn q4_scale_word(j: u32) -> u32 { return Table[params.scale_base + j]; }
fn scale(i: u32) -> f32 { return q4_scale(i, (params.flags & SCALE_F16) != 0u); }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = wgx_workgroup_index(wid, nwg) * 256u + lid;
  if (word >= params.words) { return; }
  let per_row = params.dim / 8u;
  let i = word / per_row;
  let j = word % per_row;
  let id = bitcast<i32>(Ids[i]);
  var lo = vec4<f32>();
  var hi = vec4<f32>();
  if (id >= 0 && u32(id) < params.rows) {
    let row = u32(id);
    let v = vec4<u32>(Table[row * per_row + j]);
    let mask = vec4<u32>(15u);
    let s = scale(row * params.groups + ((j * 8u) >> params.group_shift));
    lo = (vec4<f32>((v >> vec4<u32>(0u, 4u, 8u, 12u)) & mask) - 8.0) * s;
    hi = (vec4<f32>((v >> vec4<u32>(16u, 20u, 24u, 28u)) & mask) - 8.0) * s;
  }
  let e = i * params.dim + j * 8u;
  if ((params.flags & OUT_F16) != 0u) {
    let o = e / 2u;
    Out[o] = f16_word(lo.xy);
    Out[o + 1u] = f16_word(lo.zw);
    Out[o + 2u] = f16_word(hi.xy);
    Out[o + 3u] = f16_word(hi.zw);
  } else {
    for (var c = 0u; c < 4u; c++) {
      Out[e + c] = bitcast<u32>(lo[c]);
      Out[e + 4u + c] = bitcast<u32>(hi[c]);
    }
  }
}
