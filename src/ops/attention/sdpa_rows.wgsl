// sdpa_rows: attention for a step of rows of several sequences (continuous batching). Row r of
// q [1, R, Hq, D] is one token at (slot, position) = Rows[r]; its query heads attend over cache
// rows 0 .. position of that slot ([S, Hkv, MaxS, D]). One workgroup per (row, kv head, chunk)
// serves the group's query heads, so each k and v row is read once per group. The len visible
// rows are split into C = ceil(len / CHUNK_ROWS) chunks, at most params.chunks, of
// ceil(len / C) rows (the split depends on the row's own length only, so a row's output does
// not depend on the rows beside it; the workgroups of chunks past C return at once); with C > 1
// each
// workgroup writes its chunk's (m, l) and its accumulators to Part, counts itself per
// (row, kv head) (a storage barrier, then an atomic add), and the last of the C to arrive merges
// them (merge_chunks, sdpa_combine.wgsl's arithmetic) and sets the count back to 0: no workgroup
// waits for another (a row out of the caches writes (0, 1) and zeros: its output is 0). The rows come in
// tiles of T with an online softmax per head: the running max m, the sum l of exp(score - m) and
// the accumulators acc of exp(score - m) * v, both rescaled by alpha = exp(m - m_new) when a tile
// raises the max; the output is acc / l (write_out2). A row out of the caches (slot >= S or
// position >= MaxS; a negative i32 is a large u32) gives zeros and reads no cache row. With
// params.x8 (sdpa_rows_linear: a q4_gemm projection next, f32 out), whoever writes the group's
// G * D outputs (whole chunks of 32: G * D is a multiple of 32) also rounds them to int8 as
// q8_chunks.wgsl does (the same values, the same bits) into X8: the chunks' words, then their
// steps from word params.x8_steps, the projection's x.
// Per tile, four phases with a barrier after each:
//   A  invocation j scores the tile's row j for every head of the group (q is scaled when loaded),
//      NEG past the visible rows; it reads the row's k once, 16 bytes a load, for all the heads
//      (a load of 4 bytes per head and channel pair, each lane of a warp on another row, made
//      this phase most of the kernel's time);
//   B1 four invocations a head take a quarter of its tile's scores' max each;
//   B2 every invocation takes each head's new max m_new from the quarters (the maxima are kept
//      in every invocation; invocation g also keeps alpha and m_new for the others), and
//      invocation j turns row j's scores into probabilities exp(score - m_new) (0 past the rows);
//   C  each invocation's units (a pair of output channels of one head, adjacent units reading
//      adjacent v words) add p * v and p over the tile's rows, after rescaling acc and l by alpha.
#include "workgroup.wgsl"
#include "sdpa_out.wgsl"
#include "int8_chunk.wgsl"
struct Params {
  rows: u32,     // R
  hq: u32,
  hkv: u32,
  group: u32,    // hq / hkv (<= MAX_G, group * dim <= MAX_GD)
  max_seq: u32,
  dim: u32,      // head_dim, even
  slots: u32,    // S
  scale: f32,
  chunks: u32,   // C
  acc_base: u32,  // Part's first accumulator pair
  x8: u32,        // 1: the outputs in int8 too (X8)
  x8_steps: u32,  // X8's first step word
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Q: array<u32>;
@group(0) @binding(2) var<storage, read> K: array<vec4<u32>>;  // 16 bytes a load
@group(0) @binding(3) var<storage, read> V: array<u32>;
@group(0) @binding(4) var<storage, read> Rows: array<u32>;  // i32 [R, 2]: (slot, position)
@group(0) @binding(5) var<storage, read_write> Out: array<u32>;  // [1, R, Hq, D], like q
// With C > 1: per (row, query head, chunk) slot (r * Hq + h) * C + c, (m, l) at the slot and
// D / 2 accumulator pairs from params.acc_base + slot * D / 2.
@group(0) @binding(6) var<storage, read_write> Part: array<vec2<f32>>;
// With C > 1: per (row, kv head), the chunks whose partials are written this step (0 at rest).
@group(0) @binding(7) var<storage, read_write> Count: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> X8: array<u32>;

const OUT_F16: bool = {{out_f16}};  // q and Out: packed f16, else f32
// The geometry as pipeline constants (params.dim and params.group's values), so that the
// driver unrolls the loops over a row's channels and a group's heads.
override DIM: u32 = 64u;
override GROUP: u32 = 1u;
// The fewest visible rows a chunk takes (sdpa_rows.cpp's kRowsPerChunk).
override CHUNK_ROWS: u32 = 32u;

const WG: u32 = 64u;
const T: u32 = WG;  // cache rows per tile: one per invocation in phases A and B2
const MAX_G: u32 = 16u;
const MAX_GD: u32 = 1024u;
const UNITS: u32 = MAX_GD / 2u / WG;  // output pairs per invocation at most
const NEG: f32 = -1.0e30;  // a masked score: exp(NEG - m) is 0 for any finite m

var<workgroup> q_s: array<vec2<f32>, MAX_GD / 2u>;  // the group's queries, scaled ([head][pair])
var<workgroup> p_s: array<f32, MAX_G * T>;          // [head][row]: scores, then probabilities
var<workgroup> m_s: array<f32, MAX_G>;
var<workgroup> alpha_s: array<f32, MAX_G>;
var<workgroup> mx_s: array<f32, 4u * MAX_G>;  // [head][quarter]: the tile's maxima
var<workgroup> at_s: vec2<u32>;  // (visible rows, 0 out of the caches; element of the kv head's row 0)
var<workgroup> last_s: u32;      // this workgroup is the last of its (row, kv head) to finish

// Chunk c's accumulator pair p of row r's query head h, and (once per slot) its (m, l).
fn put_part(r: u32, h: u32, c: u32, p: u32, acc: vec2<f32>, ml: vec2<f32>) {
  let slot = (r * params.hq + h) * params.chunks + c;
  Part[params.acc_base + slot * (DIM / 2u) + p] = acc;
  if (p == 0u) { Part[slot] = ml; }
}

// Output pair u of the group (elements qb + 2u, + 1): acc / l, kept in q_s for the int8 form.
fn put_out(qb: u32, u: u32, acc: vec2<f32>, l: f32) {
  write_out2(qb + 2u * u, acc, l);
  q_s[u] = acc / l;
}

// With params.x8: the group's outputs (in q_s, every invocation's put_out done) in int8 chunks.
fn put_x8(qb: u32, lid: u32) {
  if (params.x8 == 0u) { return; }
  workgroupBarrier();
  if (lid < GROUP * DIM / 32u) {
    var v: array<vec4<f32>, 8>;
    for (var j = 0u; j < 8u; j++) { v[j] = vec4<f32>(q_s[16u * lid + 2u * j], q_s[16u * lid + 2u * j + 1u]); }
    let q = i8_chunk(v);
    let chunk = qb / 32u + lid;
    for (var j = 0u; j < 4u; j++) {
      X8[8u * chunk + j] = q.lo[j];
      X8[8u * chunk + 4u + j] = q.hi[j];
    }
    X8[params.x8_steps + chunk] = bitcast<u32>(q.dx);
  }
}

// Row r's pairs of kv head hk's query heads from their C chunks' partials, as sdpa_combine.wgsl
// merges them: with M the chunks' largest max, out = sum_c exp(m_c - M) * acc_c / sum_c
// exp(m_c - M) * l_c.
fn merge_chunks(r: u32, hk: u32, qb: u32, lid: u32, C: u32) {
  let half = DIM / 2u;
  for (var u = lid; u < GROUP * half; u += WG) {
    let slot0 = (r * params.hq + hk * GROUP + u / half) * params.chunks;
    var m = Part[slot0].x;
    for (var c = 1u; c < C; c++) { m = max(m, Part[slot0 + c].x); }
    var l = 0.0;
    var acc = vec2<f32>(0.0);
    for (var c = 0u; c < C; c++) {
      let st = Part[slot0 + c];
      let w = exp(st.x - m);
      l += w * st.y;
      acc += w * Part[params.acc_base + (slot0 + c) * half + u % half];
    }
    put_out(qb, u, acc, l);
  }
}

fn load_q2(i: u32) -> vec2<f32> { return {{load_q2}}; }
// k channels i .. i + 7 (i a multiple of 8).
fn load_k8(i: u32) -> array<vec4<f32>, 2> { {{load_k8}} }
fn load_v2(i: u32) -> vec2<f32> { return {{load_v2}}; }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = wgx_workgroup_index(wid, nwg);
  let chunks = params.chunks;
  if (wg >= params.rows * params.hkv * chunks) { return; }
  let c = wg % chunks;
  let r = (wg / chunks) / params.hkv;
  let hk = (wg / chunks) % params.hkv;
  let G = GROUP;
  let D = DIM;
  let half = D / 2u;
  let pairs = G * half;
  let qb = (r * params.hq + hk * G) * D;  // the group's first element of q and Out

  if (lid == 0u) {
    let slot = Rows[2u * r];
    let pos = Rows[2u * r + 1u];
    let ok = slot < params.slots && pos < params.max_seq;
    at_s = select(vec2<u32>(0u), vec2<u32>(pos + 1u, (slot * params.hkv + hk) * params.max_seq * D), ok);
  }
  let at = workgroupUniformLoad(&at_s);
  let len = at.x;
  let kb = at.y;
  let C = clamp((len + CHUNK_ROWS - 1u) / CHUNK_ROWS, 1u, chunks);  // the row's chunks
  if (c >= C) { return; }
  // This chunk's visible rows [lo, hi).
  let per = (len + C - 1u) / C;
  let lo = min(c * per, len);
  let hi = min(lo + per, len);
  if (len == 0u) {
    for (var u = lid; u < pairs; u += WG) {
      if (C == 1u) {
        put_out(qb, u, vec2<f32>(0.0), 1.0);
      } else {
        put_part(r, hk * G + u / half, c, u % half, vec2<f32>(0.0), vec2<f32>(0.0, 1.0));
      }
    }
  } else {
    attend(r, hk, c, C, qb, lo, hi, kb, lid);
  }
  if (C == 1u) {
    put_x8(qb, lid);
    return;
  }
  // The last of the row's chunks for this kv head to get here merges them: its count is taken
  // after every invocation's writes (the barrier), so when it reaches C, every chunk's partials
  // are written.
  storageBarrier();
  if (lid == 0u) {
    let done = atomicAdd(&Count[r * params.hkv + hk], 1u) + 1u;
    last_s = select(0u, 1u, done == C);
    if (done == C) { atomicStore(&Count[r * params.hkv + hk], 0u); }
  }
  if (workgroupUniformLoad(&last_s) == 0u) { return; }
  merge_chunks(r, hk, qb, lid, C);
  put_x8(qb, lid);
}

// Chunk c's rows [lo, hi) of row r for kv head hk's query heads (the cache rows from element kb):
// the output where C is 1, else the chunk's partials.
fn attend(r: u32, hk: u32, c: u32, C: u32, qb: u32, lo: u32, hi: u32, kb: u32, lid: u32) {
  let G = GROUP;
  let D = DIM;
  let half = D / 2u;
  let pairs = G * half;

  for (var u = lid; u < pairs; u += WG) { q_s[u] = load_q2(qb + 2u * u) * params.scale; }
  var m: array<f32, MAX_G>;  // each head's running max (the same in every invocation)
  for (var g = 0u; g < G; g++) { m[g] = NEG; }
  if (lid < G) { m_s[lid] = NEG; }
  var acc: array<vec2<f32>, UNITS>;
  var l: array<f32, UNITS>;
  for (var k = 0u; k < UNITS; k++) {
    acc[k] = vec2<f32>(0.0);
    l[k] = 0.0;
  }
  workgroupBarrier();

  for (var t0 = lo; t0 < hi; t0 += T) {
    let j = t0 + lid;
    let live = j < hi;
    // A: row j's scores for every head of the group, its k read once, 8 channels a load.
    var d: array<f32, MAX_G>;
    for (var g = 0u; g < G; g++) { d[g] = 0.0; }
    if (live) {
      let kr = kb + j * D;
      for (var e = 0u; e < D; e += 8u) {
        let k8 = load_k8(kr + e);
        for (var g = 0u; g < G; g++) {
          let qe = (g * D + e) / 2u;
          d[g] += dot(vec4<f32>(q_s[qe], q_s[qe + 1u]), k8[0]) + dot(vec4<f32>(q_s[qe + 2u], q_s[qe + 3u]), k8[1]);
        }
      }
    }
    for (var g = 0u; g < G; g++) { p_s[g * T + lid] = select(NEG, d[g], live); }
    workgroupBarrier();
    // B1: a quarter of each head's scores' max per invocation (4 invocations a head).
    if (lid < 4u * G) {
      let g = lid / 4u;
      var mx = NEG;
      for (var i = lid % 4u; i < T; i += 4u) { mx = max(mx, p_s[g * T + i]); }
      mx_s[lid] = mx;
    }
    workgroupBarrier();
    // B2: each head's new max (every invocation keeps the maxima), and row j's probabilities.
    for (var g = 0u; g < G; g++) {
      let m_new = max(max(m[g], max(mx_s[4u * g], mx_s[4u * g + 1u])), max(mx_s[4u * g + 2u], mx_s[4u * g + 3u]));
      if (lid == g) {
        alpha_s[g] = exp(m[g] - m_new);
        m_s[g] = m_new;
      }
      m[g] = m_new;
      p_s[g * T + lid] = select(0.0, exp(d[g] - m_new), live);
    }
    workgroupBarrier();
    // C: p * v over the tile's rows.
    let n = min(T, hi - t0);
    for (var k = 0u; k < UNITS; k++) {
      let u = lid + k * WG;
      if (u >= pairs) { break; }
      let g = u / half;
      let pb = g * T;
      let vo = kb + t0 * D + 2u * (u % half);
      var s = vec2<f32>(0.0);
      var ls = 0.0;
      for (var i = 0u; i < n; i++) {
        let p = p_s[pb + i];
        s += p * load_v2(vo + i * D);
        ls += p;
      }
      let a = alpha_s[g];
      acc[k] = acc[k] * a + s;
      l[k] = l[k] * a + ls;
    }
    workgroupBarrier();  // p_s and alpha_s are read before the next tile writes them
  }

  for (var k = 0u; k < UNITS; k++) {
    let u = lid + k * WG;
    if (u >= pairs) { break; }
    if (C == 1u) {
      put_out(qb, u, acc[k], l[k]);
    } else {
      let g = u / half;
      put_part(r, hk * G + g, c, u % half, acc[k], vec2<f32>(m_s[g], l[k]));
    }
  }
}
