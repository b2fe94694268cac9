// out[i] = src[base + sum_d c_d * strides[d]], c the output multi-index of i: the one copy kernel
// behind permute, transpose, slice, select and expand. Elements are moved as raw {{bits}}-bit
// fields ({{per_word}} per word), never converted, so every bit pattern (NaN payloads, f16
// subnormals) survives. One invocation writes one whole output word, so packed outputs never
// race, and lanes past numel in the last word are written as zero.
#include "workgroup.wgsl"
struct Params {
  numel: u32,
  rank: u32,
  base: u32,  // source element of output element 0
  pad: u32,
  shape: array<vec4<u32>, 2>,    // output sizes, 4 per vec4, rank <= 8
  strides: array<vec4<u32>, 2>,  // source element strides per output dim (0 along broadcast dims)
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Src: array<u32>;
@group(0) @binding(2) var<storage, read_write> Out: array<u32>;

// The bits of source element i, in the low bits.
fn load(i: u32) -> u32 {
  return (Src[i >> {{log2_per_word}}u] >> ((i & {{lane_mask}}u) * {{bits}}u)) & {{elem_mask}}u;
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = wgx_workgroup_index(wid, nwg) * {{workgroup_size}}u + lid;
  let first = word * {{per_word}}u;
  if (first >= params.numel) { return; }
  var packed = 0u;
  for (var k = 0u; k < {{per_word}}u; k++) {
    let i = first + k;
    if (i >= params.numel) { break; }
    var rem = i;
    var src = params.base;
    for (var d = params.rank; d > 0u; d--) {
      let q = (d - 1u) / 4u;
      let r = (d - 1u) % 4u;
      let n = params.shape[q][r];
      src += (rem % n) * params.strides[q][r];
      rem = rem / n;
    }
    packed |= load(src) << (k * {{bits}}u);
  }
  Out[word] = packed;
}
