// sdpa_with_kv_cache, FlashDecoding (S == 1): the visible cache rows 0 .. input_pos are split
// into chunks; one workgroup per (batch, kv head, chunk) runs an online softmax over its chunk for
// all `group` query heads that share the kv head (so K and V are read once per group) and writes
// partial results: the running max m, the sum l of exp(score - m), and the unnormalized
// accumulator acc = sum exp(score - m) * v. The last workgroup of each (batch, kv head) merges
// its chunks (merge_chunks), unless the dispatch's consumer does (params.merge = 0:
// rope_sdpa_linear's projection). Single pass (params.single = 1, at short context): one chunk
// holds every visible row, and its workgroup writes the output acc / l itself with write_out2
// (sdpa_out.wgsl), which is what the merge makes of one chunk (its weight exp(m - m) is
// 1); the partials are left alone.
//
// A chunk is a few tiles of T rows at long context (128 rows at 4,000 with 32 chunks), and a
// decode step has only batch * kv heads * chunks workgroups, so the time is one workgroup's latency
// per tile: every phase of a tile spreads over all WG invocations, with several independent loads
// in flight per invocation, and no phase loops over the tile's rows on a few invocations.
//   A (scores): S invocations per cache row (S = 4, 2, 1 for groups up to 4, 8, 16), each over
//     every S-th pair of the row, so the S read adjacent words (coalesced) and one K load serves up
//     to 4 heads (register accumulators); the S partial dot products of (head, row) go to part_s.
//   B1 (scores, tile max): 8 invocations per head, 8 rows each, add up the partials into p_s
//     (vec4 at a time) and take the max of their 8 rows (mx_s).
//   B2 (softmax): one invocation per (head, row) of the tile, each with its own running m and l in
//     registers: m_new = max(m, max of the head's 8 partial maxes), p = exp(score - m_new) in
//     p_s, l = l * alpha + p with alpha = exp(m - m_new). A head's l is the sum of its rows' l,
//     added once at the end (the same rescaling applies to every term, so the sum is the usual l).
//   C (p * v): one invocation per unit (a pair of v elements for two heads: one v load serves
//     both) and row group: the units * R invocations (R = WG / units) each take every R-th block
//     of 4 rows, two blocks (eight loads) at a time, rescaling by alpha first; the R partial
//     accumulators stay in registers across tiles and are added once at the end.
// Three barriers per tile (after A, B1, B2); phase C needs none after it: the next tile's A
// writes only part_s, which C does not read, and its B1 (which writes p_s) waits for A's barrier.
//
// flash_rope (rope_sdpa_with_kv_cache at S == 1): q, and the step's k and v rows, arrive as the
// projection gives them, and the kernel does rope_update_cache's work first (rope_rows), with the
// same arithmetic: every workgroup normalizes (Qwen3's q norm, with params.norm) and rotates its
// group's query heads into q_s, each value rounded to q's dtype as rope_update_cache's rotated q
// holds it; the workgroup of the last chunk, whose rows include input_pos, also normalizes and
// rotates the new k row and writes it and the v row into cache row input_pos, converted to the
// caches' storage as rope_update_cache converts them, then reads them back from there like every
// other row (storageBarrier makes its own writes visible to it). No other workgroup reads that
// row. Without the norm this adds no barrier to the kernel's (with it, one), and the storage
// barrier in the last chunk only. flash's entry point never reaches rope_rows, so it binds none
// of rope_rows' inputs (after Out: the chunk counts, then Warm).
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "rope_angles.wgsl"
#include "sdpa_out.wgsl"
struct Params {
  batch: u32,
  hq: u32,
  hkv: u32,
  group: u32,       // hq / hkv (<= MAX_G, group * dim <= MAX_GD)
  max_seq: u32,
  pos: u32,         // input_pos: rows 0 .. pos are visible
  dim: u32,         // head_dim, even
  chunk: u32,       // cache rows per chunk
  chunks: u32,      // chunks now: ceil((pos + 1) / chunk); 1 in a single pass
  max_chunks: u32,  // chunk slots per (batch, head) in the scratch
  scale: f32,
  single: u32,      // 1: a single pass (one chunk), writing Out instead of the partials
  acc_base: u32,    // Part's pair where the accumulators start (after every slot's stats)
  rotate_half: u32, // flash_rope: 1 rotates channel pairs (f, f + D/2), 0 (2f, 2f + 1)
  norm: u32,        // flash_rope: 1 normalizes q and k (RMSNorm over D, Table's weights) first
  eps: f32,         // flash_rope with norm
  inv_n: f32,       // 1 / D
  norm_base: u32,   // the word of Table where q's norm weight starts; k's follows it
  norm_words: u32,  // words of one norm weight
  pad0: u32,
  merge: u32,       // 1: the last workgroup of each (batch, kv head) merges its chunks (merge_chunks)
  warm_wgs: u32,    // workgroups after the attention's that read Warm ahead (warm)
  warm_vec4: u32,   // how much of Warm they read, in vec4 words
  warm_key: u32,    // warm's comparison value
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Q: array<u32>;
@group(0) @binding(2) var<storage, {{cache_access}}> K: array<u32>;  // the caches [B, Hkv, MaxS, D]
@group(0) @binding(3) var<storage, {{cache_access}}> V: array<u32>;
// The chunks' partial results: (m, l) per slot, then from acc_base the accumulators, dim / 2 pairs
// per slot.
@group(0) @binding(4) var<storage, read_write> Part: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read_write> Out: array<u32>;  // [B, 1, Hq, D], like q
// flash_rope only: the step's k and v rows ([B, 1, Hkv, D], q's dtype) and rope_update_cache's
// table (rope's turns per frequency, then with the norm the q and k norm weights in q's dtype).
@group(0) @binding(6) var<storage, read> KNew: array<u32>;
@group(0) @binding(7) var<storage, read> VNew: array<u32>;
@group(0) @binding(8) var<storage, read> Table: array<u32>;
// The workgroups of each (batch, kv head) that have written their partials this step (merge);
// the last one sets its count back to 0.
@group(0) @binding({{count_binding}}) var<storage, read_write> Count: array<atomic<u32>>;
// A weight that the dispatches after this one read (warm), or any buffer when no workgroup warms.
@group(0) @binding({{warm_binding}}) var<storage, read> Warm: array<vec4<u32>>;

const OUT_F16: bool = {{out_f16}};      // Out and q (and flash_rope's k and v rows): packed f16, else f32
const CACHE_F16: bool = {{cache_f16}};  // the caches: packed f16, else f32

const WG: u32 = 256u;
const T: u32 = 64u;  // cache rows scored together
const MAX_G: u32 = 16u;
const MAX_GD: u32 = 1024u;
const ML: u32 = 8u;  // merge_chunks: lanes per head for the weights (MAX_G * ML floats: mx_s)
const NEG: f32 = -1.0e30;  // a masked score: exp(NEG - m) is 0 for any finite m

// Workgroup arrays of f32 are held as vec4 so a phase that reads a run of them issues a quarter of
// the loads; element e of a flat index is [e >> 2][e & 3].
var<workgroup> q_s: array<vec2<f32>, MAX_GD / 2u>;  // the group's queries, scaled; at the end the
                                                    // R partial accumulators
var<workgroup> part_s: array<vec4<f32>, MAX_G * T / 4u>;  // partial dot products, flat
                                                         // [S][head][row]; at the end each row's l
var<workgroup> p_s: array<vec4<f32>, MAX_G * T / 4u>;     // [head][row]: scores, then probabilities
var<workgroup> mx_s: array<vec4<f32>, MAX_G * 2u>;        // [head][8]: max of 8 rows' scores
var<workgroup> m_s: array<f32, MAX_G>;
var<workgroup> alpha_s: array<f32, MAX_G>;                // rescale of the accumulators this tile
var<workgroup> last_s: u32;                               // merge: this workgroup finished last

// Diagnostics (the sdpa_decode_stop option): 1 ends each workgroup after its prologue, 2 runs
// only phase A of each tile, 3 phases A, B1 and B2 (no p * v), so that a profile tells the
// phases' costs apart; what was computed is kept (keep_f32: pad0 is always 0) and nothing is
// written. 0 (the default) runs everything.
override STOP: u32 = 0u;

// The group size and head_dim are read through f_group() and f_dim(), which the prelude declares
// (ops::FixedParams): pipeline constants, so that the driver compiles this kernel for one
// geometry (fixed trip counts).
fn keep_f32(v: f32) {
  if (params.pad0 == 1u) { Out[0] = bitcast<u32>(v); }
}

fn load_q2(i: u32) -> vec2<f32> { return {{load_q2}}; }
fn load_k2(i: u32) -> vec2<f32> { return {{load_k2}}; }
fn load_v2(i: u32) -> vec2<f32> { return {{load_v2}}; }

// One head's share of four k pairs: q is its query's pair index for the first, the others follow
// every S pairs.
fn qk4(q: u32, S: u32, k0: vec2<f32>, k1: vec2<f32>, k2: vec2<f32>, k3: vec2<f32>) -> f32 {
  return (dot(q_s[q], k0) + dot(q_s[q + S], k1)) + (dot(q_s[q + 2u * S], k2) + dot(q_s[q + 3u * S], k3));
}

// Partial dot products of the k row at element `kr` with the queries of heads g0 .. g0 + nh - 1
// (1 <= nh <= 4, component u for head g0 + u) over the pairs s, s + S, s + 2S, ... < half. Each k
// load serves all nh heads. Up to sixteen loads are issued before their products (independent, in
// flight together: Qwen3's 16 pairs an invocation, Llama's 8, make one trip to memory, not four
// or two), the rest four and one at a time, the sums added in groups of four either way. (Loads
// four at a time throughout, and phase C's eight, took Qwen3-0.6B's decode 3% longer on the
// H200: PERFORMANCE.md, 2026-12-01 (evening).)
fn add_qk4(d: ptr<function, vec4<f32>>, q0: u32, half: u32, S: u32, nh: u32, k0: vec2<f32>, k1: vec2<f32>,
           k2: vec2<f32>, k3: vec2<f32>) {
  (*d).x += qk4(q0, S, k0, k1, k2, k3);
  if (nh > 1u) { (*d).y += qk4(q0 + half, S, k0, k1, k2, k3); }
  if (nh > 2u) { (*d).z += qk4(q0 + 2u * half, S, k0, k1, k2, k3); }
  if (nh > 3u) { (*d).w += qk4(q0 + 3u * half, S, k0, k1, k2, k3); }
}
fn partial_dots(kr: u32, s: u32, S: u32, half: u32, g0: u32, nh: u32) -> vec4<f32> {
  var d = vec4<f32>(0.0);
  let q0 = g0 * half;
  var p = s;
  for (; p + 15u * S < half; p += 16u * S) {
    var k: array<vec2<f32>, 16>;
    for (var j = 0u; j < 16u; j++) { k[j] = load_k2(kr + 2u * (p + j * S)); }
    for (var j = 0u; j < 16u; j += 4u) { add_qk4(&d, q0 + p + j * S, half, S, nh, k[j], k[j + 1u], k[j + 2u], k[j + 3u]); }
  }
  for (; p + 7u * S < half; p += 8u * S) {
    var k: array<vec2<f32>, 8>;
    for (var j = 0u; j < 8u; j++) { k[j] = load_k2(kr + 2u * (p + j * S)); }
    for (var j = 0u; j < 8u; j += 4u) { add_qk4(&d, q0 + p + j * S, half, S, nh, k[j], k[j + 1u], k[j + 2u], k[j + 3u]); }
  }
  for (; p + 3u * S < half; p += 4u * S) {
    let k0 = load_k2(kr + 2u * p);
    let k1 = load_k2(kr + 2u * (p + S));
    let k2 = load_k2(kr + 2u * (p + 2u * S));
    let k3 = load_k2(kr + 2u * (p + 3u * S));
    d.x += qk4(q0 + p, S, k0, k1, k2, k3);
    if (nh > 1u) { d.y += qk4(q0 + half + p, S, k0, k1, k2, k3); }
    if (nh > 2u) { d.z += qk4(q0 + 2u * half + p, S, k0, k1, k2, k3); }
    if (nh > 3u) { d.w += qk4(q0 + 3u * half + p, S, k0, k1, k2, k3); }
  }
  for (; p < half; p += S) {
    let k = load_k2(kr + 2u * p);
    d.x += dot(q_s[q0 + p], k);
    if (nh > 1u) { d.y += dot(q_s[q0 + half + p], k); }
    if (nh > 2u) { d.z += dot(q_s[q0 + 2u * half + p], k); }
    if (nh > 3u) { d.w += dot(q_s[q0 + 3u * half + p], k); }
  }
  return d;
}

fn set_part(e: u32, x: f32) { part_s[e >> 2u][e & 3u] = x; }

fn sum4(v: vec4<f32>) -> f32 { return (v.x + v.y) + (v.z + v.w); }
fn max4(v: vec4<f32>) -> f32 { return max(max(v.x, v.y), max(v.z, v.w)); }

// p . v over four rows for two heads (p of head a in pa, of head b in pb): the v pair at element
// `o` of the first row, weighted by each; (head a's pair, head b's pair).
fn rows4(pa: vec4<f32>, pb: vec4<f32>, o: u32, dim: u32) -> vec4<f32> {
  let v0 = load_v2(o);
  let v1 = load_v2(o + dim);
  let v2 = load_v2(o + 2u * dim);
  let v3 = load_v2(o + 3u * dim);
  return (vec4<f32>(pa.x * v0, pb.x * v0) + vec4<f32>(pa.y * v1, pb.y * v1)) +
         (vec4<f32>(pa.z * v2, pb.z * v2) + vec4<f32>(pa.w * v3, pb.w * v3));
}

// Phase C for one unit u: pair u % half of heads g = 2 * (u / half) and g + 1 (the accumulators'
// xy and zw; with an odd group the last unit has no head g + 1 and its zw is never stored), over
// the tile's rows in row group rg of R: blocks of 4 rows b = rg, rg + R, ..., the last, partial
// block by the group whose turn it is. The accumulators are rescaled by their heads' alpha first.
// vb: the element offset of the tile's first row in V.
fn v_rows(a_in: vec4<f32>, u: u32, G: u32, half: u32, dim: u32, vb: u32, rows: u32, rg: u32, R: u32) -> vec4<f32> {
  let g = 2u * (u / half);
  let g1 = min(g + 1u, G - 1u);  // in range (its p_s read) when there is no head g + 1
  let pa = g * (T / 4u);         // the heads' first blocks in p_s
  let pb = g1 * (T / 4u);
  let o = vb + 2u * (u % half);
  let full = rows / 4u;
  var a = a_in * vec4<f32>(vec2<f32>(alpha_s[g]), vec2<f32>(alpha_s[g1]));
  var b = rg;
  for (; b + 3u * R < full; b += 4u * R) {  // four blocks: sixteen loads in flight
    let r0 = rows4(p_s[pa + b], p_s[pb + b], o + 4u * b * dim, dim);
    let r1 = rows4(p_s[pa + b + R], p_s[pb + b + R], o + 4u * (b + R) * dim, dim);
    let r2 = rows4(p_s[pa + b + 2u * R], p_s[pb + b + 2u * R], o + 4u * (b + 2u * R) * dim, dim);
    let r3 = rows4(p_s[pa + b + 3u * R], p_s[pb + b + 3u * R], o + 4u * (b + 3u * R) * dim, dim);
    a += r0 + r1;
    a += r2 + r3;
  }
  for (; b + R < full; b += 2u * R) {  // two blocks: eight loads in flight
    a += rows4(p_s[pa + b], p_s[pb + b], o + 4u * b * dim, dim) +
         rows4(p_s[pa + b + R], p_s[pb + b + R], o + 4u * (b + R) * dim, dim);
  }
  if (b < full) { a += rows4(p_s[pa + b], p_s[pb + b], o + 4u * b * dim, dim); }
  if (4u * full < rows && full % R == rg) {
    for (var t = 4u * full; t < rows; t++) {
      let v = load_v2(o + t * dim);
      a += vec4<f32>(p_s[pa + full][t & 3u] * v, p_s[pb + full][t & 3u] * v);
    }
  }
  return a;
}

// Stores unit u's accumulators as row group rg's partials in q_s ([group][pair], pair g * half + p).
fn put_acc(a: vec4<f32>, u: u32, G: u32, half: u32, pairs: u32, rg: u32) {
  let g = 2u * (u / half);
  let i = rg * pairs + g * half + u % half;
  q_s[i] = a.xy;
  if (g + 1u < G) { q_s[i + half] = a.zw; }
}

// A head's l: the sum of its rows' (in part_s at the end).
fn l_sum(g: u32) -> f32 {
  var l = vec4<f32>(0.0);
  for (var b = 0u; b < T / 4u; b++) { l += part_s[g * (T / 4u) + b]; }
  return sum4(l);
}

// flash: the group's queries, scaled, into q_s (then a barrier).
fn load_queries(qb: u32, kb: u32, bkv: u32, last: bool, lid: u32) {
  for (var i = lid; i < f_group() * f_dim() / 2u; i += WG) { q_s[i] = load_q2(qb + 2u * i) * params.scale; }
  workgroupBarrier();
}

// ---- flash_rope's prologue: rope_update_cache.wgsl's arithmetic on the group's query heads
// (rows 0 .. G - 1) and, in the last chunk, on the new k row (row G). Each value is loaded where
// it is needed (a rotation pairs channels that other invocations write), so the prologue needs
// no barrier of its own but the norm's; before the tiles part_s is free for the norm's partial
// sums.

// Elements i and i + 1 (i even) of the new k rows (or the v rows: `v`), as f32.
fn load_new2(v: bool, i: u32) -> vec2<f32> {
  if (OUT_F16) {
    if (v) { return unpack2x16float(VNew[i >> 1u]); }
    return unpack2x16float(KNew[i >> 1u]);
  }
  if (v) { return bitcast<vec2<f32>>(vec2<u32>(VNew[i], VNew[i + 1u])); }
  return bitcast<vec2<f32>>(vec2<u32>(KNew[i], KNew[i + 1u]));
}

// Channel e of row `row` as the projection gave it: query head `row` of the group (its elements
// from qb), or (row G) the new k row of kv head bkv.
fn raw(row: u32, e: u32, qb: u32, bkv: u32) -> f32 {
  if (row < f_group()) {
    let i = qb + row * f_dim() + e;
    return load_q2(i & ~1u)[i & 1u];
  }
  let i = bkv * f_dim() + e;
  return load_new2(false, i & ~1u)[i & 1u];
}

// x as q's dtype holds it.
fn to_io(x: f32) -> f32 {
  if (OUT_F16) { return unpack2x16float(f16_bits(x)).x; }
  return x;
}

// The norm's lanes per row, for `rows` rows: rows * L <= WG (rows <= MAX_G + 1).
fn rms_lanes(rows: u32) -> u32 { return select(16u, 8u, rows > 16u); }

// The norm's partial sums of rows 0 .. rows - 1 into part_s: L lanes per row, each adding the
// squares of every L-th channel.
fn square_sums(rows: u32, qb: u32, bkv: u32, lid: u32) {
  let L = rms_lanes(rows);
  let row = lid / L;
  if (row < rows) {
    var s = 0.0;
    for (var e = lid % L; e < f_dim(); e += L) {
      let x = raw(row, e, qb, bkv);
      s += x * x;
    }
    part_s[lid >> 2u][lid & 3u] = s;
  }
}

// Row `row`'s inverse RMS (rope_update_cache's row_inv_rms, its squares added in another order):
// its L partial sums added in order, the same on every invocation; 1 without the norm.
fn row_inv_rms(row: u32, rows: u32) -> f32 {
  if (params.norm == 0u) { return 1.0; }
  let L = rms_lanes(rows);
  var s = 0.0;
  for (var j = row * L; j < (row + 1u) * L; j++) { s += part_s[j >> 2u][j & 3u]; }
  return inverseSqrt(s * params.inv_n + params.eps);
}

// Channel e of row `row` normalized (inverse RMS `inv`), with q's norm weight for the query heads
// and k's for the k row, rounded to q's dtype (rope_update_cache's `normalized`); as it was without
// the norm.
fn normed(row: u32, e: u32, inv: f32, qb: u32, bkv: u32) -> f32 {
  let x = raw(row, e, qb, bkv);
  if (params.norm == 0u) { return x; }
  let kind = select(1u, 0u, row < f_group());
  let w = Table[params.norm_base + kind * params.norm_words + select(e, e >> 1u, OUT_F16)];
  var weight = bitcast<f32>(w);
  if (OUT_F16) { weight = unpack2x16float(w)[e & 1u]; }
  return to_io(x * inv * weight);
}

// Channel e of row `row` normalized and rotated by input_pos, rounded to q's dtype: what
// rope_update_cache writes for it (the same rope_rotate of the same pair).
fn roped(row: u32, e: u32, inv: f32, qb: u32, bkv: u32) -> f32 {
  let half = f_dim() / 2u;
  var lo = e & ~1u;  // interleaved: the pair (2f, 2f + 1)
  var f = e / 2u;
  var hi = lo + 1u;
  var second = (e & 1u) == 1u;
  if (params.rotate_half != 0u) {  // the pair (f, f + D/2)
    second = e >= half;
    lo = select(e, e - half, second);
    f = lo;
    hi = lo + half;
  }
  let sc = rope_sincos(params.pos, vec2<u32>(Table[2u * f], Table[2u * f + 1u]));
  let r = rope_rotate(normed(row, lo, inv, qb, bkv), normed(row, hi, inv, qb, bkv), sc);
  return to_io(select(r.x, r.y, second));
}

// v as the caches' words: one packed f16 word (x), or two f32 words.
fn cache_words(v: vec2<f32>) -> vec2<u32> {
  if (CACHE_F16) { return vec2<u32>(f16_word(v), 0u); }
  return bitcast<vec2<u32>>(v);
}
fn cache_word(i: u32) -> u32 { return select(i, i >> 1u, CACHE_F16); }

// Elements i and i + 1 (i even) of the k cache (kind 0) or the v cache take v. Only flash_rope's
// caches are writable: flash's body is empty (and never called).
fn store_cache2(kind: u32, i: u32, v: vec2<f32>) { {{store_cache2}} }

// flash_rope: rope_update_cache's work for this workgroup (then a barrier): the group's queries
// normalized, rotated and scaled into q_s; in the last chunk (`last`) the new rows written to
// cache row input_pos of kv head bkv (kb: that head's first cache element), visible to this
// workgroup's reads of the caches after the storage barrier.
fn rope_rows(qb: u32, kb: u32, bkv: u32, last: bool, lid: u32) {
  let dim = f_dim();
  let G = f_group();
  if (params.norm != 0u && (G + 1u) * (dim / 2u) <= WG) {
    normed_rows_held(qb, kb, bkv, last, lid);
    return;
  }
  let rows = G + select(0u, 1u, last);
  if (params.norm != 0u) {
    square_sums(rows, qb, bkv, lid);
    workgroupBarrier();
  }
  for (var i = lid; i < G * dim / 2u; i += WG) {
    let g = (2u * i) / dim;
    let e = (2u * i) % dim;
    let inv = row_inv_rms(g, rows);
    q_s[i] = vec2<f32>(roped(g, e, inv, qb, bkv), roped(g, e + 1u, inv, qb, bkv)) * params.scale;
  }
  if (last) {
    let inv = row_inv_rms(G, rows);
    let row = kb + params.pos * dim;
    for (var i = lid; i < dim / 2u; i += WG) {
      let e = 2u * i;
      store_cache2(0u, row + e, vec2<f32>(roped(G, e, inv, qb, bkv), roped(G, e + 1u, inv, qb, bkv)));
      store_cache2(1u, row + e, load_new2(true, bkv * dim + e));
    }
    storageBarrier();
  }
  workgroupBarrier();
}

// rope_rows with the norm where an invocation holds one rotated pair of one row ((G + 1) * D / 2
// <= WG: Qwen3's two query heads and k row of 128 channels): every load the prologue needs (the
// pair's two channels, their norm weights, the pair's rope turn, and in the last chunk the v row's
// pair) is issued before the norm's barrier, so nothing after it waits on memory again. The sum of
// a row's squares is its pairs' partials added in order from part_s (the same on each of its
// invocations). The k row's rotated pairs go through p_s (free until the tiles), so that the cache
// writes take neighbouring channels (one packed f16 word) after a barrier, as rope_rows writes
// them. (The two passes over the rows above, where this fits, took Qwen3-0.6B's decode 9.5%
// longer on the H200, PERFORMANCE.md, 2026-12-01 (evening).)
fn normed_rows_held(qb: u32, kb: u32, bkv: u32, last: bool, lid: u32) {
  let dim = f_dim();
  let half = dim / 2u;
  let G = f_group();
  let rows = G + select(0u, 1u, last);
  let row = lid / half;
  let p = lid % half;
  let live = row < rows;
  // The pair's channels: (p, p + D/2) rotating halves, else (2p, 2p + 1); its frequency is p.
  let lo = select(2u * p, p, params.rotate_half != 0u);
  let hi = select(lo + 1u, p + half, params.rotate_half != 0u);
  var x = vec2<f32>(0.0);
  var w = vec2<u32>(0u);
  var turn = vec2<u32>(0u);
  var vv = vec2<f32>(0.0);
  if (live) {
    x = vec2<f32>(raw(row, lo, qb, bkv), raw(row, hi, qb, bkv));
    let wb = params.norm_base + select(1u, 0u, row < G) * params.norm_words;
    w = vec2<u32>(Table[wb + select(lo, lo >> 1u, OUT_F16)], Table[wb + select(hi, hi >> 1u, OUT_F16)]);
    turn = vec2<u32>(Table[2u * p], Table[2u * p + 1u]);
  }
  if (last && lid < half) { vv = load_new2(true, bkv * dim + 2u * lid); }
  set_part(lid, x.x * x.x + x.y * x.y);
  workgroupBarrier();
  if (live) {
    var s = 0.0;
    if (half % 4u == 0u) {
      var s4 = vec4<f32>(0.0);
      for (var b = row * half / 4u; b < (row + 1u) * half / 4u; b++) { s4 += part_s[b]; }
      s = sum4(s4);
    } else {
      for (var j = row * half; j < (row + 1u) * half; j++) { s += part_s[j >> 2u][j & 3u]; }
    }
    let inv = inverseSqrt(s * params.inv_n + params.eps);
    var wf = bitcast<vec2<f32>>(w);
    if (OUT_F16) { wf = vec2<f32>(unpack2x16float(w.x)[lo & 1u], unpack2x16float(w.y)[hi & 1u]); }
    let n = vec2<f32>(to_io(x.x * inv * wf.x), to_io(x.y * inv * wf.y));
    let r = rope_rotate(n.x, n.y, rope_sincos(params.pos, turn));
    let o = vec2<f32>(to_io(r.x), to_io(r.y));
    if (row < G) {
      let i = row * dim;
      q_s[(i + lo) >> 1u][lo & 1u] = o.x * params.scale;
      q_s[(i + hi) >> 1u][hi & 1u] = o.y * params.scale;
    } else {
      p_s[lo >> 2u][lo & 3u] = o.x;
      p_s[hi >> 2u][hi & 3u] = o.y;
    }
  }
  workgroupBarrier();
  if (last) {
    if (lid < half) {
      let e = 2u * lid;
      let row0 = kb + params.pos * dim;
      store_cache2(0u, row0 + e, vec2<f32>(p_s[e >> 2u][e & 3u], p_s[(e + 1u) >> 2u][(e + 1u) & 3u]));
      store_cache2(1u, row0 + e, vv);
    }
    storageBarrier();
    workgroupBarrier();
  }
}

// The output of the group's heads from their chunks' partials (slots from slot0, max_chunks
// apart per head): out = sum_c w_c * acc_c / sum_c w_c * l_c,
// w_c = exp(m_c - M), M the max of the head's m_c. The weights go to p_s (G * chunks of them, at
// most MAX_G * T: the host's bound), each head's sum of w_c * l_c to m_s; then the G * D / 2
// pairs are split over R = WG / pairs groups of chunks (eight loads in flight per invocation),
// whose sums meet in q_s. The weights take ML lanes per head, so the merge's serial part is
// chunks / ML long, not 2 * chunks.
fn weight(i: u32) -> f32 { return p_s[i >> 2u][i & 3u]; }  // m_c, then w_c, of flat (head, chunk) i
fn merge_chunks(qb: u32, slot0: u32, lid: u32) {
  let G = f_group();
  let half = f_dim() / 2u;
  let pairs = G * half;
  let nch = params.chunks;
  let stride = params.max_chunks;
  for (var i = lid; i < G * nch; i += WG) {
    let st = Part[slot0 + (i / nch) * stride + i % nch];
    p_s[i >> 2u][i & 3u] = st.x;
    part_s[i >> 2u][i & 3u] = st.y;
  }
  workgroupBarrier();
  // ML lanes per head: each takes the chunks c = lane, lane + ML, ...; their maxima, then their
  // sums of w_c * l_c, meet in mx_s ([head][ML]).
  let mg = lid / ML;
  let mj = lid % ML;
  let lane_live = mg < G;
  var big = NEG;
  if (lane_live) {
    for (var c = mj; c < nch; c += ML) { big = max(big, weight(mg * nch + c)); }
    mx_s[2u * mg + mj / 4u][mj & 3u] = big;
  }
  workgroupBarrier();
  var l = 0.0;
  if (lane_live) {
    big = max4(max(mx_s[2u * mg], mx_s[2u * mg + 1u]));
    for (var c = mj; c < nch; c += ML) {
      let i = mg * nch + c;
      let w = exp(weight(i) - big);
      p_s[i >> 2u][i & 3u] = w;
      l += w * part_s[i >> 2u][i & 3u];
    }
  }
  workgroupBarrier();  // every lane has read its head's maxima
  if (lane_live) { mx_s[2u * mg + mj / 4u][mj & 3u] = l; }
  workgroupBarrier();
  if (lid < G) { m_s[lid] = sum4(mx_s[2u * lid] + mx_s[2u * lid + 1u]); }
  workgroupBarrier();
  let R = max(1u, WG / pairs);
  for (var i0 = 0u; i0 < pairs; i0 += WG) {
    let i = i0 + lid % pairs;
    let r = lid / pairs;
    let live = i < pairs && r < R;
    var a = vec2<f32>(0.0);
    if (live) {
      let g = i / half;
      let w0 = g * nch;
      let base = params.acc_base + (slot0 + g * stride) * half + i % half;
      var c = r;
      for (; c + 7u * R < nch; c += 8u * R) {
        let v0 = Part[base + c * half];
        let v1 = Part[base + (c + R) * half];
        let v2 = Part[base + (c + 2u * R) * half];
        let v3 = Part[base + (c + 3u * R) * half];
        let v4 = Part[base + (c + 4u * R) * half];
        let v5 = Part[base + (c + 5u * R) * half];
        let v6 = Part[base + (c + 6u * R) * half];
        let v7 = Part[base + (c + 7u * R) * half];
        a += (weight(w0 + c) * v0 + weight(w0 + c + R) * v1 + weight(w0 + c + 2u * R) * v2 + weight(w0 + c + 3u * R) * v3) +
             (weight(w0 + c + 4u * R) * v4 + weight(w0 + c + 5u * R) * v5 + weight(w0 + c + 6u * R) * v6 +
              weight(w0 + c + 7u * R) * v7);
      }
      for (; c + 3u * R < nch; c += 4u * R) {
        let v0 = Part[base + c * half];
        let v1 = Part[base + (c + R) * half];
        let v2 = Part[base + (c + 2u * R) * half];
        let v3 = Part[base + (c + 3u * R) * half];
        a += weight(w0 + c) * v0 + weight(w0 + c + R) * v1 + weight(w0 + c + 2u * R) * v2 + weight(w0 + c + 3u * R) * v3;
      }
      for (; c < nch; c += R) { a += weight(w0 + c) * Part[base + c * half]; }
    }
    workgroupBarrier();  // q_s's last reads (a previous round's) are done
    if (live) { q_s[r * pairs + i % pairs] = a; }
    workgroupBarrier();
    if (live && r == 0u) {
      var s = a;
      for (var j = 1u; j < R; j++) { s += q_s[j * pairs + i]; }
      write_out2(qb + 2u * i, s, m_s[i / half]);
    }
  }
}

// The params.warm_wgs workgroups after the attention's read the first params.warm_vec4 words of
// Warm, each a run of them (coalesced, 8 loads in flight per invocation), while the attention's
// few workgroups leave most of the GPU idle: the products that follow then find that weight in
// the L2 cache instead of memory. What they read decides nothing but a comparison that no data is
// expected to pass (every lane of the words' xor equal to params.warm_key), and that adds 0 to a
// count: the loads cannot be dropped, and memory stays as it was whatever the data.
fn warm(w: u32, lid: u32) {
  let per = (params.warm_vec4 + params.warm_wgs - 1u) / params.warm_wgs;
  let begin = w * per;
  let end = min(begin + per, params.warm_vec4);
  var x = vec4<u32>(0u);
  for (var i = begin + lid; i < end; i += 8u * WG) {
    for (var k = 0u; k < 8u; k++) {
      let j = i + k * WG;
      if (j < end) { x ^= Warm[j]; }
    }
  }
  if (all(x == vec4<u32>(params.warm_key))) { atomicAdd(&Count[0], 0u); }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = wgx_workgroup_index(wid, nwg);
  let attention = params.batch * params.hkv * params.chunks;
  if (wg >= attention) {
    if (wg - attention < params.warm_wgs) { warm(wg - attention, lid); }
    return;
  }
  let c = wg % params.chunks;
  let bkv = wg / params.chunks;  // b * hkv + kv head
  let G = f_group();
  let dim = f_dim();
  let half = dim / 2u;
  let pairs = G * half;
  let items = G * T;  // (head, row) of a tile: at most 4 per invocation
  let start = c * params.chunk;
  let end = min(start + params.chunk, params.pos + 1u);
  let kb = bkv * params.max_seq * dim;
  // q is [B, 1, Hq, D]: the group's heads are G * D consecutive elements.
  let qb = ((bkv / params.hkv) * params.hq + (bkv % params.hkv) * G) * dim;

  // Phase A's roles: S invocations per row (S * G <= 16, so the partials fit part_s), S * T per
  // block of hb <= 4 heads, 4 / S blocks.
  let S = select(select(1u, 2u, G <= 8u), 4u, G <= 4u);
  let blocks = 4u / S;
  let hb = (G + blocks - 1u) / blocks;
  let a_s = lid % S;
  let a_t = (lid / S) % T;
  let a_g0 = (lid / (S * T)) * hb;
  let a_nh = min(hb, G - min(G, a_g0));  // 0: no head left for this block
  // Phase C's roles: unit c_u0 (and c_u1 when there are more units than invocations: an odd
  // group with wide heads) in row group c_rg of R. A unit is a pair of v elements for two heads, so
  // one v load serves both, and R is twice what one head per invocation would allow. R * pairs <=
  // 2 * WG, so the R partial accumulators fit q_s.
  let units = ((G + 1u) / 2u) * half;
  let R = max(1u, WG / units);
  let c_u0 = lid % units;
  let c_u1 = c_u0 + WG;
  let c_rg = lid / units;

  {{prologue}}(qb, kb, bkv, c + 1u == params.chunks, lid);  // q_s holds the scaled queries
  if (STOP == 1u) {
    keep_f32(q_s[lid].x);
    return;
  }
  var m_r = vec4<f32>(NEG);   // running max of item slot k (all of a head's slots agree)
  var l_r = vec4<f32>(0.0);   // running sum of exp(score - m) of the slot's row
  var a0 = vec4<f32>(0.0);    // accumulators of units c_u0 and c_u1 over row group c_rg
  var a1 = vec4<f32>(0.0);

  for (var j0 = start; j0 < end; j0 += T) {
    let rows = min(T, end - j0);
    // A: partial dot products; a row past the tile's scores NEG (partial NEG from s = 0, 0 from
    // the others).
    if (a_nh > 0u) {
      var d = vec4<f32>(select(0.0, NEG, a_s == 0u));
      if (a_t < rows) { d = partial_dots(kb + (j0 + a_t) * dim, a_s, S, half, a_g0, a_nh); }
      let e = (a_s * G + a_g0) * T + a_t;
      set_part(e, d.x);
      if (a_nh > 1u) { set_part(e + T, d.y); }
      if (a_nh > 2u) { set_part(e + 2u * T, d.z); }
      if (a_nh > 3u) { set_part(e + 3u * T, d.w); }
    }
    workgroupBarrier();
    if (STOP == 2u) { continue; }
    // B1: rows r0 .. r0 + 7 of head g, two vec4 of each of the S partials.
    if (lid < G * 8u) {
      let r0 = lid * 8u;  // = g * T + 8 * (lid % 8) as an index of [head][row]
      var s0 = part_s[r0 / 4u];
      var s1 = part_s[r0 / 4u + 1u];
      for (var s = 1u; s < S; s++) {
        let b = (s * items + r0) / 4u;
        s0 += part_s[b];
        s1 += part_s[b + 1u];
      }
      p_s[r0 / 4u] = s0;
      p_s[r0 / 4u + 1u] = s1;
      mx_s[lid >> 2u][lid & 3u] = max4(max(s0, s1));
    }
    workgroupBarrier();
    // B2: item slot k is (head, row) i = lid + k * WG, the same every tile.
    for (var k = 0u; k < 4u; k++) {
      let i = lid + k * WG;
      if (i < items) {
        let g = i / T;
        let m_old = m_r[k];
        let m_new = max(m_old, max4(max(mx_s[2u * g], mx_s[2u * g + 1u])));
        let alpha = exp(m_old - m_new);
        let p = exp(p_s[i >> 2u][i & 3u] - m_new);
        p_s[i >> 2u][i & 3u] = p;
        l_r[k] = l_r[k] * alpha + p;
        m_r[k] = m_new;
        if (i % T == 0u) {
          m_s[g] = m_new;
          alpha_s[g] = alpha;
        }
      }
    }
    workgroupBarrier();
    if (STOP == 3u) { continue; }
    // C: the rows' p * v, after rescaling by the head's alpha.
    if (c_rg < R) {
      let vb = kb + j0 * dim;
      a0 = v_rows(a0, c_u0, G, half, dim, vb, rows, c_rg, R);
      if (c_u1 < units) { a1 = v_rows(a1, c_u1, G, half, dim, vb, rows, c_rg, R); }
    }
  }

  if (STOP != 0u) {
    keep_f32(part_s[lid % (MAX_G * T / 4u)].x + p_s[lid % (MAX_G * T / 4u)].x + a0.x + a1.x + l_r.x + m_r.x);
    return;
  }
  // q_s and part_s were last read before the last tile's B2 barrier: they take the R partial
  // accumulators and each row's l.
  if (c_rg < R) {
    put_acc(a0, c_u0, G, half, pairs, c_rg);
    if (c_u1 < units) { put_acc(a1, c_u1, G, half, pairs, c_rg); }
  }
  for (var k = 0u; k < 4u; k++) {
    let i = lid + k * WG;
    if (i < items) { part_s[i >> 2u][i & 3u] = l_r[k]; }
  }
  workgroupBarrier();

  if (params.single != 0u) {
    // out has q's layout: the group's heads are the G * D elements from qb.
    for (var i = lid; i < pairs; i += WG) {
      var acc = q_s[i];
      for (var r = 1u; r < R; r++) { acc += q_s[r * pairs + i]; }
      write_out2(qb + 2u * i, acc, l_sum(i / half));
    }
    return;
  }
  // Slot of (b, query head, chunk); query head = kv head * G + g.
  let slot0 = ((bkv / params.hkv) * params.hq + (bkv % params.hkv) * G) * params.max_chunks + c;
  for (var g = lid; g < G; g += WG) { Part[slot0 + g * params.max_chunks] = vec2<f32>(m_s[g], l_sum(g)); }
  for (var i = lid; i < pairs; i += WG) {
    var acc = q_s[i];
    for (var r = 1u; r < R; r++) { acc += q_s[r * pairs + i]; }
    Part[params.acc_base + (slot0 + (i / half) * params.max_chunks) * half + i % half] = acc;
  }
  if (params.merge == 0u) { return; }
  // The last of the (batch, kv head)'s workgroups to get here merges their chunks: its count
  // is taken after every invocation's writes (the barrier), so when it reaches params.chunks,
  // every chunk's partials are written.
  storageBarrier();
  if (lid == 0u) {
    let done = atomicAdd(&Count[bkv], 1u) + 1u;
    last_s = select(0u, 1u, done == params.chunks);
    if (done == params.chunks) { atomicStore(&Count[bkv], 0u); }
  }
  if (workgroupUniformLoad(&last_s) == 0u) { return; }
  merge_chunks(qb, slot0 - c, lid);
}
