// out = cond ? a : b with NumPy broadcasting of all three. The choice moves element bits unchanged,
// so one variant serves every dtype of a width: {{bits}}-bit elements, {{per_word}} per word. One
// invocation writes one 32-bit word of the output, so packed outputs never race.
#include "workgroup.wgsl"
struct Params {
  numel: u32,
  rank: u32,
  flags: u32,    // bits 0-2: cond, a, b has the output's shape; bits 3-4: a, b is a scalar
  pad0: u32,
  a_value: u32,  // a scalar a's element bits (a Sym's value changes between executions)
  b_value: u32,
  pad1: u32,
  pad2: u32,
  shape: array<vec4<u32>, 2>,      // output sizes, 4 per vec4, rank <= 8
  c_strides: array<vec4<u32>, 2>,  // element strides of each input; 0 along broadcast dims
  a_strides: array<vec4<u32>, 2>,
  b_strides: array<vec4<u32>, 2>,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> C: array<u32>;
@group(0) @binding(2) var<storage, read> A: array<u32>;  // cond's buffer again for a scalar a
@group(0) @binding(3) var<storage, read> B: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out: array<u32>;

fn shift(i: u32) -> u32 { return (i % {{per_word}}u) * {{bits}}u; }
fn load_a(i: u32) -> u32 { return (A[i / {{per_word}}u] >> shift(i)) & {{mask}}u; }
fn load_b(i: u32) -> u32 { return (B[i / {{per_word}}u] >> shift(i)) & {{mask}}u; }

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = wgx_workgroup_index(wid, nwg) * {{workgroup_size}}u + lid;
  let first = word * {{per_word}}u;
  if (first >= params.numel) { return; }
  var out = 0u;  // the tail of the last word stays 0
  for (var k = 0u; k < {{per_word}}u; k++) {
    let i = first + k;
    if (i >= params.numel) { break; }
    var ic = i;
    var ia = i;
    var ib = i;
    if ((params.flags & 7u) != 7u) {
      var rem = i;
      var sc = 0u;
      var sa = 0u;
      var sb = 0u;
      for (var d = params.rank; d > 0u; d--) {
        let q = (d - 1u) / 4u;
        let r = (d - 1u) % 4u;
        let n = params.shape[q][r];
        let c = rem % n;
        rem = rem / n;
        sc += c * params.c_strides[q][r];
        sa += c * params.a_strides[q][r];
        sb += c * params.b_strides[q][r];
      }
      if ((params.flags & 1u) == 0u) { ic = sc; }
      if ((params.flags & 2u) == 0u) { ia = sa; }
      if ((params.flags & 4u) == 0u) { ib = sb; }
    }
    let cond = ((C[ic >> 2u] >> ((ic & 3u) * 8u)) & 0xffu) != 0u;
    var v: u32;
    if (cond) {
      v = select(load_a(ia), params.a_value, (params.flags & 8u) != 0u);
    } else {
      v = select(load_b(ib), params.b_value, (params.flags & 16u) != 0u);
    }
    out |= v << shift(i);
  }
  Out[word] = out;
}
