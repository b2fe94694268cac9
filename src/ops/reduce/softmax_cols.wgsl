// softmax / log_softmax along a dim that is not the last: x viewed as [outer, n, inner] has
// outer * inner columns of stride `inner`. Two dispatches of this kernel:
//   phase 0: `cols` adjacent columns per workgroup (adjacent elements: coalesced), each with
//            `lanes` lanes that take every lanes-th element of the column and keep its max and
//            sum of exponentials in one pass (online: the sum is rescaled when the max grows);
//            the lanes' pairs meet in a shared-memory tree and the column's go to Stats;
//   phase 1: one invocation per output word writes its {{per_word}} elements from their
//            columns' statistics, so packed words are written whole.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
struct Params {
  phase: u32,
  columns: u32,
  n: u32,
  inner: u32,
  numel: u32,
  lanes: u32,  // phase 0; cols = WG / lanes
  pad0: u32,
  pad1: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read_write> Stats: array<f32>;  // per column: a, b
@group(0) @binding(3) var<storage, read_write> Out: array<u32>;

const WG = 256u;  // kWorkgroupSize on the host
const PW = {{per_word}}u;
const LOWEST = bitcast<f32>(0xff7fffffu);  // max's identity; finite, so exp(m - x) stays defined

fn unpack(w: u32, i: u32) -> f32 { return {{unpack}}; }
fn load_x(i: u32) -> f32 { return unpack(X[i / PW], i); }
fn b_finish(s: f32) -> f32 { return {{b_finish}}; }
fn apply(x: f32, a: f32, b: f32) -> f32 { return {{apply}}; }

var<workgroup> part_m: array<f32, WG>;
var<workgroup> part_s: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let group = wgx_workgroup_index(wid, nwg);
  if (params.phase == 0u) {
    let cols = WG / params.lanes;
    let lane = lid / cols;
    let id = group * cols + lid % cols;
    var m = LOWEST;
    var s = 0.0;
    if (id < params.columns) {
      let outer = id / params.inner;
      let base = outer * params.n * params.inner + (id - outer * params.inner);
      for (var r = lane; r < params.n; r += params.lanes) {
        let x = load_x(base + r * params.inner);
        if (x > m) {
          s = s * exp(m - x) + 1.0;
          m = x;
        } else {
          s += exp(x - m);
        }
      }
    }
    part_m[lid] = m;
    part_s[lid] = s;
    workgroupBarrier();
    for (var h = params.lanes / 2u; h > 0u; h >>= 1u) {
      if (lane < h) {
        let m2 = part_m[lid + h * cols];
        let top = max(m, m2);
        s = s * exp(m - top) + part_s[lid + h * cols] * exp(m2 - top);
        m = top;
        part_m[lid] = m;
        part_s[lid] = s;
      }
      workgroupBarrier();
    }
    if (lane == 0u && id < params.columns) {
      Stats[2u * id] = m;
      Stats[2u * id + 1u] = b_finish(s);
    }
    return;
  }
  let id = group * WG + lid;
  if (id * PW >= params.numel) { return; }
  var v: array<f32, 2>;  // past the last element: the zero tail
  for (var k = 0u; k < PW; k++) {
    let e = id * PW + k;
    if (e < params.numel) {
      let outer = e / (params.n * params.inner);
      let col = outer * params.inner + e % params.inner;
      v[k] = apply(load_x(e), Stats[2u * col], Stats[2u * col + 1u]);
    } else {
      v[k] = 0.0;
    }
  }
  Out[id] = {{pack}};
}
