// sdpa_with_kv_cache, split-K combine: merges the partial softmax results that sdpa_flash.wgsl
// and sdpa_k16.wgsl write per (output row, chunk of the cache): the chunk's max score m_c, its sum
// l_c of exp(score - m_c) and its unnormalized accumulator acc_c. With M the max of the m_c:
//   out = sum_c exp(m_c - M) * acc_c / sum_c exp(m_c - M) * l_c.
// A chunk that saw no visible row has m_c = -1e30, l_c = 0: its weight is 0 (some chunk has the
// row's first cache row, so M is finite). One invocation per pair of output elements (head_dim is
// even), so packed f16 words never race. write_out2 (sdpa_out.wgsl) stores acc / l; the
// split pass calls it too when one chunk covers the row (then it has nothing to merge).
#include "workgroup.wgsl"
#include "sdpa_out.wgsl"
struct Params {
  pairs: u32,   // output rows * dim / 2
  half: u32,    // dim / 2
  chunks: u32,  // chunks now
  stride: u32,  // chunk slots per output row in Stats and Acc
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Stats: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> Acc: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> Out: array<u32>;

const OUT_F16: bool = {{out_f16}};  // Out holds packed f16 (else f32)

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = wgx_workgroup_index(wid, nwg) * 256u + lid;
  if (i >= params.pairs) { return; }
  let slot0 = (i / params.half) * params.stride;  // out is [rows, D] row-major
  var m = Stats[slot0].x;
  for (var c = 1u; c < params.chunks; c++) { m = max(m, Stats[slot0 + c].x); }
  var l = 0.0;
  var acc = vec2<f32>(0.0);
  for (var c = 0u; c < params.chunks; c++) {
    let st = Stats[slot0 + c];
    let w = exp(st.x - m);
    l += w * st.y;
    acc += w * Acc[(slot0 + c) * params.half + i % params.half];
  }
  write_out2(2u * i, acc, l);
}
