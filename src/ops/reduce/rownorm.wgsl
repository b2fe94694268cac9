// Row-wise normalizations of x viewed as [rows, n] (the last dim): softmax, log_softmax,
// rms_norm, layer_norm, computed in f32. Per row, two workgroup reductions give two statistics:
//   a: max (softmax) or mean (layer_norm); unused by rms_norm, which skips its pass;
//   b: from the sum of b_term(x, a): 1 / sum exp, log sum exp, or the inverse deviation.
// Then every element is rewritten as apply(x, a, b). A workgroup takes `cols` consecutive rows
// with `lanes` invocations each (powers of two, cols * lanes = 256). The host makes cols a
// multiple of {{per_word}} when rows do not fill whole words, so every word written belongs to
// one workgroup.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "rownorm_flags.toml"
struct Params {
  rows: u32,
  n: u32,
  lanes: u32,
  flags: u32,  // rownorm_flags.toml: WEIGHT, BIAS bound (otherwise x stands in, unread)
  inv_n: f32,  // 1 / n (0 for empty rows, which write nothing)
  eps: f32,
  pad0: u32,
  pad1: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read> W: array<u32>;
@group(0) @binding(3) var<storage, read> B: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out: array<u32>;

const WG = 256u;  // kWorkgroupSize on the host
const PW = {{per_word}}u;
const HAS_A = {{has_a}};
const A_MAX = {{a_max}};  // a reduces by max, else by sum
const LOWEST = bitcast<f32>(0xff7fffffu);  // max's identity; finite, so exp(m - x) stays defined

fn unpack(w: u32, i: u32) -> f32 { return {{unpack}}; }
fn load_x(i: u32) -> f32 { return unpack(X[i / PW], i); }
fn weight(c: u32) -> f32 {
  if ((params.flags & WEIGHT) == 0u) { return 1.0; }
  return unpack(W[c / PW], c);
}
fn bias(c: u32) -> f32 {
  if ((params.flags & BIAS) == 0u) { return 0.0; }
  return unpack(B[c / PW], c);
}

fn a_finish(s: f32) -> f32 { return {{a_finish}}; }
fn b_term(x: f32, a: f32) -> f32 { return {{b_term}}; }
fn b_finish(s: f32) -> f32 { return {{b_finish}}; }
fn apply(x: f32, a: f32, b: f32, c: u32) -> f32 { return {{apply}}; }

var<workgroup> red: array<f32, WG>;
var<workgroup> stat_a: array<f32, WG>;
var<workgroup> stat_b: array<f32, WG>;

// v reduced (max or sum) over the lanes of each row; every lane gets its row's result.
fn reduce_lanes(lid: u32, lane: u32, v: f32, take_max: bool) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = params.lanes / 2u; s > 0u; s >>= 1u) {
    if (lane < s) {
      let q = red[lid + s];
      red[lid] = select(red[lid] + q, max(red[lid], q), take_max);
    }
    workgroupBarrier();
  }
  let r = red[lid - lane];
  workgroupBarrier();
  return r;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let cols = WG / params.lanes;
  let lane = lid % params.lanes;
  let col = lid / params.lanes;
  let first_row = wgx_workgroup_index(wid, nwg) * cols;
  if (first_row >= params.rows) { return; }
  let row = first_row + col;
  let live = row < params.rows;
  let base = row * params.n;

  var a = 0.0;
  if (HAS_A) {
    var acc = select(0.0, LOWEST, A_MAX);
    if (live) {
      for (var j = lane; j < params.n; j += params.lanes) {
        let x = load_x(base + j);
        acc = select(acc + x, max(acc, x), A_MAX);
      }
    }
    a = a_finish(reduce_lanes(lid, lane, acc, A_MAX));
  }
  var acc_b = 0.0;
  if (live) {
    for (var j = lane; j < params.n; j += params.lanes) { acc_b += b_term(load_x(base + j), a); }
  }
  let b = b_finish(reduce_lanes(lid, lane, acc_b, false));
  if (lane == 0u) {
    stat_a[col] = a;
    stat_b[col] = b;
  }
  workgroupBarrier();

  // The words of this workgroup's rows, adjacent invocations on adjacent words.
  let begin = first_row * params.n;
  let end = min(first_row + cols, params.rows) * params.n;
  for (var w = begin / PW + lid; w * PW < end; w += WG) {
    // Every entry assigned on every iteration: past the last row it is the zero tail.
    var v: array<f32, 2>;
    for (var k = 0u; k < PW; k++) {
      let e = w * PW + k;
      if (e < end) {
        var r = 0u;
        var c = e - begin;
        if (cols > 1u) {
          r = c / params.n;
          c -= r * params.n;
        }
        v[k] = apply(load_x(e), stat_a[r], stat_b[r], c);
      } else {
        v[k] = 0.0;
      }
    }
    Out[w] = {{pack}};
  }
}
