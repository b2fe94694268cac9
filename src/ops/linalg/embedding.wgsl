// out[..., d] = table[ids[...], d]. One invocation writes one 32-bit word of the output
// ({{per_word}} elements), so packed f16 rows of odd width never race at their shared words.
// An id outside [0, V) yields a row of zeros: PyTorch raises an index error there, but a shader
// cannot, and it must never read outside the table.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
struct Params {
  numel: u32,  // output elements
  dim: u32,    // D
  rows: u32,   // V
  pad: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Table: array<u32>;
@group(0) @binding(2) var<storage, read> Ids: array<u32>;
@group(0) @binding(3) var<storage, read_write> Out: array<u32>;

fn elem(e: u32) -> f32 { return {{elem}}; }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = wgx_workgroup_index(wid, nwg) * 256u + lid;
  let first = word * {{per_word}}u;
  if (first >= params.numel) { return; }
  var vals = vec2<f32>();
  for (var c = 0u; c < {{per_word}}u; c++) {
    let i = first + c;
    if (i >= params.numel) { break; }
    let id = bitcast<i32>(Ids[i / params.dim]);
    if (id >= 0 && u32(id) < params.rows) { vals[c] = elem(u32(id) * params.dim + i % params.dim); }
  }
  Out[word] = {{store}};
}
