// out = a (op) b with NumPy broadcasting, for every storage dtype. One invocation writes one
// 32-bit word of the output ({{per_word}} elements), so packed f16 and byte outputs never race.
#include "workgroup.wgsl"
#include "binary_flags.toml"
struct Params {
  numel: u32,
  rank: u32,
  flags: u32,  // A_FULL: a has the output's shape; B_FULL: b does (no index arithmetic needed)
  pad: u32,
  shape: array<vec4<u32>, 2>,      // output sizes, 4 per vec4, rank <= 8
  a_strides: array<vec4<u32>, 2>,  // element strides of a; 0 along broadcast dims
  b_strides: array<vec4<u32>, 2>,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> A: array<u32>;
@group(0) @binding(2) var<storage, read> B: array<u32>;
@group(0) @binding(3) var<storage, read_write> Out: array<u32>;

fn load_a(i: u32) -> {{in_type}} { return {{load_a}}; }
fn load_b(i: u32) -> {{in_type}} { return {{load_b}}; }

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = wgx_workgroup_index(wid, nwg) * {{workgroup_size}}u + lid;
  let first = word * {{per_word}}u;
  if (first >= params.numel) { return; }
  var vals: array<{{out_type}}, 4>;
  for (var k = 0u; k < {{per_word}}u; k++) {
    let i = first + k;
    if (i >= params.numel) { break; }
    var ia = i;
    var ib = i;
    if ((params.flags & (A_FULL | B_FULL)) != (A_FULL | B_FULL)) {
      var rem = i;
      var sa = 0u;
      var sb = 0u;
      for (var d = params.rank; d > 0u; d--) {
        let q = (d - 1u) / 4u;
        let r = (d - 1u) % 4u;
        let n = params.shape[q][r];
        let c = rem % n;
        rem = rem / n;
        sa += c * params.a_strides[q][r];
        sb += c * params.b_strides[q][r];
      }
      if ((params.flags & A_FULL) == 0u) { ia = sa; }
      if ((params.flags & B_FULL) == 0u) { ib = sb; }
    }
    let a = load_a(ia);
    let b = load_b(ib);
    vals[k] = {{expr}};
  }
  Out[word] = {{store}};
}
