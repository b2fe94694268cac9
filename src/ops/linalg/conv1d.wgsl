// conv1d's direct route: out[b, co, l] = bias[co] + sum over ci, t of
// x[b, ci, l * stride + t * dilation - padding] * w[co, ci, t], positions outside [0, L) reading
// zero. One invocation writes one 32-bit word of the output ({{per_word}} elements, each computed
// on its own from its flat index, so packed f16 words that straddle rows never race), summing in
// f32 whatever the storage.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "linalg_flags.toml"
#include "bias.wgsl"
struct Params {
  numel: u32,  // output elements: N * Cout * Lout
  cin: u32,
  l: u32,
  cout: u32,
  lout: u32,
  k: u32,
  stride: u32,
  padding: u32,
  dilation: u32,
  flags: u32,  // linalg_flags.toml
  pad0: u32,
  pad1: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read> W: array<u32>;
@group(0) @binding(3) var<storage, read> Bias: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out: array<u32>;

fn x_elem(e: u32) -> f32 { return {{x_elem}}; }
fn w_elem(e: u32) -> f32 { return {{w_elem}}; }

fn conv(i: u32) -> f32 {
  let lo = i % params.lout;
  let co = (i / params.lout) % params.cout;
  let b = i / (params.lout * params.cout);
  var acc = bias_at(co, (params.flags & BIAS) != 0u, {{f16}});
  // Position of tap t: start + t * dilation, in i32 so that the padding can make it negative.
  let start = i32(lo * params.stride) - i32(params.padding);
  for (var ci = 0u; ci < params.cin; ci++) {
    let x_row = (b * params.cin + ci) * params.l;
    let w_row = (co * params.cin + ci) * params.k;
    for (var t = 0u; t < params.k; t++) {
      let pos = start + i32(t * params.dilation);
      if (pos >= 0 && u32(pos) < params.l) { acc += x_elem(x_row + u32(pos)) * w_elem(w_row + t); }
    }
  }
  return acc;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = wgx_workgroup_index(wid, nwg) * 256u + lid;
  let first = word * {{per_word}}u;
  if (first >= params.numel) { return; }
  var vals = vec2<f32>();
  for (var c = 0u; c < {{per_word}}u; c++) {
    if (first + c < params.numel) { vals[c] = conv(first + c); }
  }
  Out[word] = {{store}};
}
