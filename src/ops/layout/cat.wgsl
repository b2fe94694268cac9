// cat along one dim: out[o, a, t] = In_j[o, a - off[j], t] for off[j] <= a < off[j + 1], with o
// the index over the dims before the cat dim and t over the dims after it (inputs are
// contiguous, so three numbers locate an element).
//
// Why one dispatch gathers from all inputs instead of one dispatch per input writing its slab:
// with {{per_word}} elements per word, a slab boundary can fall inside a word (along a middle dim
// it does so in every row), and a word may hold elements of up to four inputs. Per-input
// dispatches would make several dispatches write such words. Here each invocation owns one output
// word and gathers each of its elements from whichever input holds it, so every word is written
// once. A dispatch binds up to seven inputs (WebGPU guarantees eight storage buffers per stage;
// the output takes one). A cat of more inputs runs one dispatch per group of seven, in order: a
// word that straddles two groups is read-modify-written, each dispatch replacing only the lanes of
// its own group. Dispatches of one command buffer are ordered and, within one, a word has one
// invocation, so nothing races. Lanes past numel are written as zero.
#include "workgroup.wgsl"
struct Params {
  numel: u32,
  inner: u32,  // elements per step along the cat dim (product of the output dims after it)
  axis: u32,   // the output's size along the cat dim
  count: u32,  // inputs bound in this dispatch, 1..7
  offs: array<vec4<u32>, 2>,  // off[j]: where bound input j starts along the cat dim; off[count]: where the group ends
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> In0: array<u32>;
@group(0) @binding(2) var<storage, read> In1: array<u32>;
@group(0) @binding(3) var<storage, read> In2: array<u32>;
@group(0) @binding(4) var<storage, read> In3: array<u32>;
@group(0) @binding(5) var<storage, read> In4: array<u32>;
@group(0) @binding(6) var<storage, read> In5: array<u32>;
@group(0) @binding(7) var<storage, read> In6: array<u32>;
@group(0) @binding(8) var<storage, read_write> Out: array<u32>;

fn off(j: u32) -> u32 { return params.offs[j / 4u][j % 4u]; }

fn load_word(j: u32, w: u32) -> u32 {
  switch j {
    case 0u: { return In0[w]; }
    case 1u: { return In1[w]; }
    case 2u: { return In2[w]; }
    case 3u: { return In3[w]; }
    case 4u: { return In4[w]; }
    case 5u: { return In5[w]; }
    default: { return In6[w]; }
  }
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = wgx_workgroup_index(wid, nwg) * {{workgroup_size}}u + lid;
  let first = word * {{per_word}}u;
  if (first >= params.numel) { return; }
  let lo = off(0u);
  let hi = off(params.count);
  var packed = 0u;
  var keep = 0u;  // lanes that other groups' dispatches write
  var mine = 0u;
  for (var k = 0u; k < {{per_word}}u; k++) {
    let i = first + k;
    if (i >= params.numel) { break; }
    let t = i % params.inner;
    let q = i / params.inner;
    let a = q % params.axis;
    let o = q / params.axis;
    if (a < lo || a >= hi) {
      keep |= {{elem_mask}}u << (k * {{bits}}u);
      continue;
    }
    var j = 0u;
    for (var i = 1u; i < 7u; i++) {
      if (i < params.count && a >= off(i)) { j = i; }
    }
    let len = off(j + 1u) - off(j);
    let src = (o * len + (a - off(j))) * params.inner + t;
    let e = (load_word(j, src >> {{log2_per_word}}u) >> ((src & {{lane_mask}}u) * {{bits}}u)) & {{elem_mask}}u;
    packed |= e << (k * {{bits}}u);
    mine++;
  }
  if (mine == 0u) { return; }
  if (keep != 0u) { packed |= Out[word] & keep; }
  Out[word] = packed;
}
