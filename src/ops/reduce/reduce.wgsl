// sum, mean, amax, amin, argmax of x over some dims. The host views x as kept and reduced groups
// of dims (adjacent dims of one kind merged) and splits the 256 invocations of a workgroup into
// `cols` items times `lanes` lanes (powers of two): the lanes of an item take every lanes-th
// reduced element and meet in a shared-memory tree. cols is a multiple of the {{out_per_word}}
// outputs per word, so one invocation packs each word whole: no races.
//   row tiling:     lanes are adjacent invocations and walk a contiguous reduced run;
//   strided tiling: items are adjacent invocations, so they read adjacent kept elements.
// Few long outputs would leave the GPU idle, so they are split: mode 1 reduces chunks of each
// output into partials, mode 2 (a second dispatch) merges each output's partials. With
// params.merge, mode 1's workgroups count themselves once their partials are written, and the
// last to arrive merges every output's partials as mode 2 would (the same lanes per output, the
// same order), then sets the count back to 0: no second dispatch, and no workgroup waits for
// another.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
struct Params {
  outputs: u32,      // output elements
  count: u32,        // reduced elements per output
  kept_groups: u32,  // used entries of kept_size / kept_stride (<= 4)
  red_groups: u32,   // used entries of red_size / red_stride (<= 4)
  lanes: u32,
  lane_stride: u32,  // invocation distance between lanes of one item
  col_stride: u32,   // invocation distance between items
  scale: f32,        // mean: 1 / count (NaN when count is 0)
  mode: u32,         // 0: whole outputs; 1: partials of chunks; 2: partials merged into outputs
  items: u32,        // what the tiles cover: outputs, or outputs * chunks in mode 1
  chunk: u32,        // reduced elements per chunk (count in mode 0)
  chunks: u32,       // chunks per output (modes 1 and 2)
  merge: u32,        // mode 1: 1 when its last workgroup merges the partials (no mode 2 dispatch)
  merge_lanes: u32,  // lanes per output of that merge (mode 2's row tiling: adjacent lanes)
  pad0: u32,
  pad1: u32,
  kept_size: vec4<u32>,  // outermost first
  kept_stride: vec4<u32>,
  red_size: vec4<u32>,
  red_stride: vec4<u32>,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read_write> Out: array<u32>;
// Partials of mode 1, chunk-major ([chunks][outputs]), two words each: value bits, index.
@group(0) @binding(3) var<storage, read_write> Part: array<u32>;
// Mode 1 with params.merge: the workgroups that have written their partials this step.
@group(0) @binding(4) var<storage, read_write> Count: array<atomic<u32>>;

const WG = 256u;  // kWorkgroupSize on the host
const PW = {{out_per_word}}u;  // outputs per word
const EMPTY = 0xffffffffu;  // the index of a partial result that has seen no element yet

// A partial result: a value and, for the selecting ops, the reduced index it came from.
struct Acc { v: {{acc_type}}, i: u32 }

fn load(i: u32) -> {{acc_type}} {
  let w = X[i / {{in_per_word}}u];
  return {{unpack}};
}

fn pack(v: array<{{out_type}}, 4>) -> u32 { return {{pack}}; }

fn add(a: Acc, b: Acc) -> Acc { return Acc(a.v + b.v, 0u); }

// b replaces a when better, or equal with a smaller index, so the first occurrence wins whatever
// order partials meet in. EMPTY partials are identities, which keeps infinities exact. NaNs
// compare false, so they are skipped, not propagated (WGSL lets compilers assume none).
fn pick(a: Acc, b: Acc) -> Acc {
  let take = b.i != EMPTY && (a.i == EMPTY || {{better}} || (b.v == a.v && b.i < a.i));
  return Acc(select(a.v, b.v, take), select(a.i, b.i, take));
}

fn merge(a: Acc, b: Acc) -> Acc { return {{merge}}(a, b); }

// Element x at index j into an invocation's partial. Its indices only grow, so a tie keeps the
// partial: fewer tests than a merge, and no branches, in the loop that streams x. `counts` says
// whether x may be picked at all: argmax skips NaNs by their bits (a comparison could be folded
// away), so a NaN never becomes a partial, as the host's llm::argmax skips them.
fn add_fold(a: Acc, x: {{acc_type}}, j: u32) -> Acc { return Acc(a.v + x, 0u); }
fn pick_fold(a: Acc, x: {{acc_type}}, j: u32) -> Acc {
  let b = Acc(x, j);
  let counts = {{counts}};
  let take = counts && (a.i == EMPTY || {{better}});
  return Acc(select(a.v, b.v, take), select(a.i, j, take));
}
fn fold(a: Acc, x: {{acc_type}}, j: u32) -> Acc { return {{merge}}_fold(a, x, j); }

fn result(a: Acc) -> {{out_type}} { return {{result}}; }

// Element offset in x of position `flat` of the first `groups` groups of a list (row-major, the
// last of them fastest).
fn offset_of(flat: u32, groups: u32, size: vec4<u32>, stride: vec4<u32>) -> u32 {
  if (groups == 1u) { return flat * stride.x; }
  var rem = flat;
  var off = 0u;
  for (var g = groups; g > 0u; g--) {
    let n = size[g - 1u];
    off += (rem % n) * stride[g - 1u];
    rem /= n;
  }
  return off;
}

var<workgroup> tree: array<Acc, WG>;  // the lanes' partials, merged in place
var<workgroup> last_s: u32;           // 1 in the workgroup that merges the partials (params.merge)

// The item's partials of mode 1 (chunk-major), its lane's share of them.
fn partials(item: u32, lane: u32, lanes: u32) -> Acc {
  var acc = Acc({{acc_type}}(0), EMPTY);
  for (var c = lane; c < params.chunks; c += lanes) {
    let k = 2u * (c * params.outputs + item);
    acc = merge(acc, Acc(bitcast<{{acc_type}}>(Part[k]), Part[k + 1u]));
  }
  return acc;
}

// Every invocation's partial into `tree`, the lanes of each item merged into its lane 0's slot.
// Called by the whole workgroup.
fn meet(lid: u32, lane: u32, lanes: u32, lane_stride: u32, acc: Acc) {
  tree[lid] = acc;
  workgroupBarrier();
  for (var s = lanes / 2u; s > 0u; s >>= 1u) {
    if (lane < s) { tree[lid] = merge(tree[lid], tree[lid + s * lane_stride]); }
    workgroupBarrier();
  }
}

// The outputs from `item` (the first of a word, at column `col`) packed into their word.
fn write_word(item: u32, col: u32, col_stride: u32) {
  var vals: array<{{out_type}}, 4>;
  for (var k = 0u; k < PW; k++) {
    if (item + k < params.outputs) {
      vals[k] = result(tree[(col + k) * col_stride]);
    } else {
      vals[k] = {{out_type}}(0);  // the zero tail
    }
  }
  Out[item / PW] = pack(vals);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let cols = WG / params.lanes;  // a multiple of PW: a workgroup's outputs fill whole words
  let lane = (lid / params.lane_stride) % params.lanes;
  let col = (lid / params.col_stride) % cols;
  let item = wgx_workgroup_index(wid, nwg) * cols + col;
  var acc = Acc({{acc_type}}(0), EMPTY);
  if (item < params.items && params.mode == 2u) {
    acc = partials(item, lane, params.lanes);
  } else if (item < params.items) {
    // Item = chunk * outputs + output (mode 0: one chunk), so adjacent items read adjacent
    // elements in the strided tiling.
    let o = item % params.outputs;
    let first = (item / params.outputs) * params.chunk;
    let last = min(first + params.chunk, params.count);
    let base = offset_of(o, params.kept_groups, params.kept_size, params.kept_stride);
    if (params.red_groups <= 1u) {
      // One run of fixed stride (the common case): four independent loads in flight per step.
      let stride = params.red_stride.x;
      let step = params.lanes;
      var j = first + lane;
      for (; j + 3u * step < last; j += 4u * step) {
        let x0 = load(base + j * stride);
        let x1 = load(base + (j + step) * stride);
        let x2 = load(base + (j + 2u * step) * stride);
        let x3 = load(base + (j + 3u * step) * stride);
        acc = fold(fold(acc, x0, j), x1, j + step);
        acc = fold(fold(acc, x2, j + 2u * step), x3, j + 3u * step);
      }
      for (; j < last; j += step) { acc = fold(acc, load(base + j * stride), j); }
    } else {
      // Several runs: an odometer over the innermost run r, dividing only when it wraps.
      let inner = params.red_groups - 1u;
      let n = params.red_size[inner];
      let stride = params.red_stride[inner];
      var j = first + lane;
      var r = j % n;
      var outer = j / n;
      var off = offset_of(outer, inner, params.red_size, params.red_stride);
      for (; j < last; j += params.lanes) {
        acc = fold(acc, load(base + off + r * stride), j);
        r += params.lanes;
        if (r >= n) {
          outer += r / n;
          r %= n;
          off = offset_of(outer, inner, params.red_size, params.red_stride);
        }
      }
    }
  }
  meet(lid, lane, params.lanes, params.lane_stride, acc);
  if (params.mode == 1u) {
    if (lane == 0u && item < params.items) {
      Part[2u * item] = bitcast<u32>(tree[lid].v);
      Part[2u * item + 1u] = tree[lid].i;
    }
    if (params.merge == 0u) { return; }
    // Every workgroup counts itself (those past the items too) once its partials are written
    // (the barrier); the one that brings the count to every workgroup's merges them all.
    storageBarrier();
    if (lid == 0u) {
      let total = nwg.x * nwg.y * nwg.z;
      let done = atomicAdd(&Count[0], 1u) + 1u;
      last_s = select(0u, 1u, done == total);
      if (done == total) { atomicStore(&Count[0], 0u); }
    }
    if (workgroupUniformLoad(&last_s) == 0u) { return; }
    // Mode 2's merge with its row tiling (adjacent lanes per output), a workgroup's worth of
    // outputs at a time.
    let m_cols = WG / params.merge_lanes;
    let m_lane = lid % params.merge_lanes;
    let m_col = lid / params.merge_lanes;
    for (var first = 0u; first < params.outputs; first += m_cols) {
      let o = first + m_col;
      var m = Acc({{acc_type}}(0), EMPTY);
      if (o < params.outputs) { m = partials(o, m_lane, params.merge_lanes); }
      meet(lid, m_lane, params.merge_lanes, 1u, m);
      if (m_lane == 0u && o < params.outputs && m_col % PW == 0u) { write_word(o, m_col, params.merge_lanes); }
      workgroupBarrier();  // tree is read above before the next round writes it
    }
    return;
  }
  if (lane != 0u || item >= params.items) { return; }
  // The first output of each word packs the word.
  if (col % PW != 0u) { return; }
  write_word(item, col, params.col_stride);
}
