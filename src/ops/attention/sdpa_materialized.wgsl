// sdpa_with_kv_cache, materialized: the general route (any head_dim, any S). Each workgroup takes
// query rows (b, s, h) in turn and owns one scratch row of max_seq scores: q.k for every visible
// cache row j <= input_pos + s, then the probabilities in place, then out = P.V / sum. The
// workgroups are a bounded pool (params.groups), so the scratch does not grow with S * heads.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
struct Params {
  batch: u32,
  seq: u32,      // S, new tokens
  hq: u32,       // query heads
  hkv: u32,      // cache heads
  group: u32,    // hq / hkv
  max_seq: u32,  // cache rows
  pos: u32,      // input_pos
  dim: u32,      // head_dim
  rows: u32,     // batch * seq * hq
  groups: u32,   // workgroups in the pool (<= rows)
  scale: f32,
  kv_len: u32,   // rows of K and V that exist (sdpa: max_seq; attention: T, with pos = T)
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Q: array<u32>;
@group(0) @binding(2) var<storage, read> K: array<u32>;
@group(0) @binding(3) var<storage, read> V: array<u32>;
@group(0) @binding(4) var<storage, read_write> Scores: array<f32>;
@group(0) @binding(5) var<storage, read_write> Out: array<u32>;

const WG: u32 = 64u;
const OUT_PER_WORD: u32 = {{out_per_word}}u;
const NEG: f32 = -1.0e30;  // a masked score: exp(NEG - m) is 0 for any finite m

var<workgroup> red: array<f32, WG>;

fn load_q(i: u32) -> f32 { return {{load_q}}; }
fn load_k(i: u32) -> f32 { return {{load_k}}; }
fn load_v(i: u32) -> f32 { return {{load_v}}; }

// Workgroup-wide max (is_max) or sum of x; every invocation gets the result.
fn reduce(x: f32, lid: u32, is_max: bool) -> f32 {
  red[lid] = x;
  workgroupBarrier();
  for (var n = WG / 2u; n > 0u; n = n / 2u) {
    if (lid < n) { red[lid] = select(red[lid] + red[lid + n], max(red[lid], red[lid + n]), is_max); }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();  // red is reused by the next call
  return r;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = wgx_workgroup_index(wid, nwg);
  if (g >= params.groups) { return; }
  let D = params.dim;
  let scratch = g * params.max_seq;
  for (var row = g; row < params.rows; row += params.groups) {
    // q and out are [B, S, Hq, D]: `row` is (b * S + s) * Hq + h.
    let h = row % params.hq;
    let s = (row / params.hq) % params.seq;
    let b = row / (params.hq * params.seq);
    let len = min(params.pos + s + 1u, params.kv_len);  // causal: cache rows 0 .. input_pos + s
    let qb = row * D;
    let kb = (b * params.hkv + h / params.group) * params.max_seq * D;

    var m = NEG;
    for (var j = lid; j < len; j += WG) {
      var acc = 0.0;
      for (var d = 0u; d < D; d++) { acc += load_q(qb + d) * load_k(kb + j * D + d); }
      let sc = acc * params.scale;
      Scores[scratch + j] = sc;
      m = max(m, sc);
    }
    m = reduce(m, lid, true);
    var sum = 0.0;
    for (var j = lid; j < len; j += WG) {
      let p = exp(Scores[scratch + j] - m);
      Scores[scratch + j] = p;
      sum += p;
    }
    let inv = 1.0 / reduce(sum, lid, false);
    storageBarrier();  // every probability written before any is read

    for (var w = lid; w * OUT_PER_WORD < D; w += WG) {
      let d = w * OUT_PER_WORD;
      var acc = vec2<f32>(0.0);
      for (var j = 0u; j < len; j++) {
        let p = Scores[scratch + j];
        acc.x += p * load_v(kb + j * D + d);
        if (OUT_PER_WORD == 2u) { acc.y += p * load_v(kb + j * D + d + 1u); }
      }
      let o = acc * inv;
      Out[(qb + d) / OUT_PER_WORD] = {{store_word}};
    }
    storageBarrier();  // the scratch row is read before the next row overwrites it
  }
}
