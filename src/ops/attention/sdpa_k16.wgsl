// sdpa_with_kv_cache, K16 streaming: online-softmax attention over tiles of KT = 16 cache rows.
// A workgroup takes QT query rows of one (batch, kv head): row r is token s = r / group of query
// head kv_head * group + r % group, so the heads that share a kv head share every K/V tile load
// (grouped-query attention), and a decode step (S == 1) still fills `group` rows of the tile.
// Per K tile: scores (one per invocation and row/column pair) into workgroup memory, then each
// row's TPR invocations rescale their slice of the row's accumulator (m, l kept per invocation)
// and add p * V. K and V take turns in one tile buffer, which keeps the Q32 x D128 tile within
// 32 KiB of workgroup storage; rows are padded by one pair against bank conflicts.
// Causal: row r sees cache rows j <= input_pos + s, and rows j < kv_len only (the op attention
// runs non-causal with input_pos = kv_len = T: every row sees all T rows).
// Split-K: when the (batch, kv head, query tile) grid is too small to fill the device (decode,
// short steps over a long context), `splits` workgroups share a query tile, each taking
// `tiles_per_split` K tiles, and write partial (m, l, acc) per row for sdpa_combine.wgsl.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
struct Params {
  batch: u32,
  seq: u32,        // S, new tokens
  hq: u32,
  hkv: u32,
  group: u32,      // hq / hkv
  max_seq: u32,
  pos: u32,        // input_pos
  row_tiles: u32,  // ceil(seq * group / QT)
  scale: f32,
  splits: u32,     // 1: the output is written here; more: partials for the combine pass
  tiles_per_split: u32,
  kv_len: u32,     // rows of K and V that exist (sdpa: max_seq)
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Q: array<u32>;
@group(0) @binding(2) var<storage, read> K: array<u32>;
@group(0) @binding(3) var<storage, read> V: array<u32>;
@group(0) @binding(4) var<storage, read_write> Out: array<u32>;
@group(0) @binding(5) var<storage, read_write> Stats: array<vec2<f32>>;  // (m, l) per (row, split)
@group(0) @binding(6) var<storage, read_write> Acc: array<vec2<f32>>;    // D / 2 pairs per (row, split)

const WG: u32 = 256u;
const QT: u32 = {{q_tile}}u;    // query rows per workgroup
const KT: u32 = 16u;            // cache rows per tile
const D: u32 = {{head_dim}}u;
const HALF: u32 = D / 2u;       // element pairs per row
const STRIDE: u32 = HALF + 1u;  // pairs per row in workgroup memory (padded)
const TPR: u32 = WG / QT;       // invocations per query row when accumulating
const PAIRS: u32 = HALF / TPR;  // accumulator pairs per invocation
const NEG: f32 = -1.0e30;       // a masked score

var<workgroup> q_s: array<vec2<f32>, QT * STRIDE>;   // the query tile, scaled
var<workgroup> kv_s: array<vec2<f32>, KT * STRIDE>;  // the K tile, then the V tile
var<workgroup> p_s: array<f32, QT * KT>;             // scores

fn load_q2(i: u32) -> vec2<f32> { return {{load_q2}}; }
fn load_k2(i: u32) -> vec2<f32> { return {{load_k2}}; }
fn load_v2(i: u32) -> vec2<f32> { return {{load_v2}}; }
fn store_out2(i: u32, v: vec2<f32>) { {{store_out2}} }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = wgx_workgroup_index(wid, nwg);
  if (wg >= params.batch * params.hkv * params.row_tiles * params.splits) { return; }
  let split = wg % params.splits;
  let tile = (wg / params.splits) % params.row_tiles;
  let bkv = wg / (params.splits * params.row_tiles);  // b * hkv + kv head
  let b = bkv / params.hkv;
  let h0 = (bkv % params.hkv) * params.group;  // first query head of the group
  let rows = params.seq * params.group;
  let r0 = tile * QT;
  let s_last = (min(rows, r0 + QT) - 1u) / params.group;
  let visible = min(params.pos + s_last + 1u, params.kv_len);  // cache rows any row of the tile sees
  let kb = bkv * params.max_seq * D;
  let t_begin = split * params.tiles_per_split;
  let t_end = min(t_begin + params.tiles_per_split, (visible + KT - 1u) / KT);

  for (var i = lid; i < QT * HALF; i += WG) {
    let r = r0 + i / HALF;
    var q = vec2<f32>(0.0);
    if (r < rows) {
      let s = r / params.group;
      q = load_q2(((b * params.seq + s) * params.hq + h0 + r % params.group) * D + 2u * (i % HALF)) * params.scale;
    }
    q_s[(i / HALF) * STRIDE + i % HALF] = q;
  }

  // This invocation's row and accumulator slice: pairs lane + TPR * k.
  let my_r = lid / TPR;
  let lane = lid % TPR;
  var m = NEG;
  var l = 0.0;
  var acc: array<vec2<f32>, PAIRS>;

  for (var t = t_begin; t < t_end; t++) {
    let j0 = t * KT;
    workgroupBarrier();  // q_s written; the previous V tile fully read
    for (var i = lid; i < KT * HALF; i += WG) {
      let j = j0 + i / HALF;
      var x = vec2<f32>(0.0);  // rows past the visible ones (and past max_seq) are not read
      if (j < visible) { x = load_k2(kb + j * D + 2u * (i % HALF)); }
      kv_s[(i / HALF) * STRIDE + i % HALF] = x;
    }
    workgroupBarrier();
    for (var i = lid; i < QT * KT; i += WG) {
      let r = i / KT;
      let j = i % KT;
      var sc = 0.0;
      for (var p = 0u; p < HALF; p++) { sc += dot(q_s[r * STRIDE + p], kv_s[j * STRIDE + p]); }
      // Rows past the tile's end (r0 + r >= rows) are never written: their mask does not matter.
      p_s[i] = select(NEG, sc, j0 + j < min(params.pos + (r0 + r) / params.group + 1u, params.kv_len));
    }
    workgroupBarrier();  // scores done: the K tile may be overwritten
    for (var i = lid; i < KT * HALF; i += WG) {
      let j = j0 + i / HALF;
      var x = vec2<f32>(0.0);
      if (j < visible) { x = load_v2(kb + j * D + 2u * (i % HALF)); }
      kv_s[(i / HALF) * STRIDE + i % HALF] = x;
    }
    workgroupBarrier();
    var tile_max = NEG;
    for (var j = 0u; j < KT; j++) { tile_max = max(tile_max, p_s[my_r * KT + j]); }
    let m_new = max(m, tile_max);
    let alpha = exp(m - m_new);
    l *= alpha;
    for (var k = 0u; k < PAIRS; k++) { acc[k] *= alpha; }
    for (var j = 0u; j < KT; j++) {
      let sc = p_s[my_r * KT + j];
      // Masked scores weigh 0 even while m is still NEG, so a split none of whose rows this query
      // row sees reports l = 0 and acc = 0 (the combine would weigh it 0 anyway: m stays NEG).
      let p = select(0.0, exp(sc - m_new), sc > NEG);
      l += p;
      for (var k = 0u; k < PAIRS; k++) { acc[k] += p * kv_s[j * STRIDE + lane + TPR * k]; }
    }
    m = m_new;
  }

  let r = r0 + my_r;
  if (r >= rows) { return; }
  let row = (b * params.seq + r / params.group) * params.hq + h0 + r % params.group;  // out is [B, S, Hq, D]
  if (params.splits == 1u) {
    let inv = 1.0 / l;
    for (var k = 0u; k < PAIRS; k++) { store_out2(row * D + 2u * (lane + TPR * k), acc[k] * inv); }
    return;
  }
  let slot = row * params.splits + split;
  if (lane == 0u) { Stats[slot] = vec2<f32>(m, l); }
  for (var k = 0u; k < PAIRS; k++) { Acc[slot * HALF + lane + TPR * k] = acc[k]; }
}
