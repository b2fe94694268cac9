{{directives}}
// y = x @ W^T (+ bias) for few rows of x (decode), W in q4gsw: the weights are read once for up to
// R rows of x. A row of W is K/32 vec4<u32>s, each holding 32 nibbles (one group of 32, or part
// of a larger group). The workgroup's lanes form WG / L groups of L lanes; a group owns C
// neighbouring columns and lane t of it takes the vec4s t, t + L, ... of each of them: the
// group's lanes read contiguous runs of every row, and every x value a lane loads serves C
// columns. Each vec4's sum of (nibble - 8) * x is taken in f32 and scaled once (a vec4 lies
// within one group); the L partial sums of a column are then reduced one row of x at a time:
// {{reduction_doc}}. Output columns are split into up to three tensors (linear_qkv), or
// neighbouring columns are gate/up pairs reduced to one output (linear_swiglu).
// x: {{x_doc}}.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "silu.wgsl"
#include "q4.wgsl"
#include "quant_flags.toml"
struct Params {
  m: u32,
  n: u32,
  k: u32,
  flags: u32,
  split0: u32,       // columns [0, split0) go to Out0, [split0, split1) to Out1, the rest to Out2
  split1: u32,
  tiles_n: u32,      // column blocks: ceil(N / (C * WG / L))
  tpc: u32,          // L for the workgroup reduction: a power of two, at most WG
  scale_base: u32,   // the first scale's word in S
  group_shift: u32,  // log2(group size)
  groups: u32,       // groups per row: K / group size
  eps: f32,          // the add_rms_norm prologue's
  tile_stride: u32,  // G: workgroups per row of x, each taking every G-th column tile
  pad0: u32,
  pad1: u32,
  pad2: u32,         // always 0 (keep reads it)
  chunks: u32,       // comb: flash decoding's chunks this step
  slots: u32,        // comb: chunk slots per query head in Stats and Acc
  head_dim: u32,     // comb: D (x is K / D heads of D)
  pad3: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> W: array<vec4<u32>>;  // the packed nibbles
@group(0) @binding(3) var<storage, read> S: array<u32>;        // the same tensor, for its scales
@group(0) @binding(4) var<storage, read> Bias: array<u32>;
@group(0) @binding(5) var<storage, read_write> Out0: array<u32>;
@group(0) @binding(6) var<storage, read_write> Out1: {{out1_type}};
@group(0) @binding(7) var<storage, read_write> Out2: array<u32>;
{{stage_bindings}}

// The fields fixed per product (n, k, flags, tpc, tiles_n, group_shift, groups, tile_stride,
// head_dim, slots) are read through p_<field>(), which the prelude declares (ops::FixedParams):
// pipeline constants, so that the driver compiles the kernel for one product (trip counts of the
// chunk loop and the reduction known, no branches on the flags).

const WG = {{workgroup_size}}u;  // 256
const R = {{rows}}u;  // rows of x per workgroup: 1 (one-token decode, fewer registers) or 4
const C = 4u;  // columns per lane group

{{workgroup_vars}}
{{stage_vars}}

// One row of x staged in workgroup memory (the staged variants size these by override constants;
// elsewhere they are unused and 1 long). In f32: K floats, laid out so that the lanes of a group,
// reading neighbouring chunks, hit neighbouring vec4s: part p (0..7, 4 floats) of chunk c sits at
// xs[p * K / 32 + c]. In int8 (stage_quarter_i8): chunk c's 32 values as i8_chunk rounds them, its
// words lo at xq[c], hi at xq[K / 32 + c]; xd[c] = (dx, 8 * sum of q), the nibbles' offset of 8.
// A chunk's integer sum is exact (below 2^17); rounding x to a multiple of dx (at most dx / 2
// off) is the error this adds (tests/test_options.cpp bounds it).
override XS: u32 = 1u;  // K / 4
override XQ: u32 = 1u;  // K / 16
override XD: u32 = 1u;  // K / 32
var<workgroup> xs: array<vec4<f32>, XS>;
var<workgroup> xq: array<vec4<u32>, XQ>;
var<workgroup> xd: array<vec2<f32>, XD>;

var<workgroup> qmax: array<f32, WG>;
var<workgroup> qsum: array<i32, WG>;
var<workgroup> ssq: array<f32, WG>;  // the norm prologues' partial sums of squares

// The norm prologue's sum of squares (SSQ, norm.i8) rides stage_quarter_i8's barriers: each
// invocation's partial sum goes to ssq before its first, SSQ_PARTS invocations add up
// WG / SSQ_PARTS of them each into ssq_part before its second, and row_ssq() adds those after
// the staging. The int8 rounding needs no sum of squares: a chunk's values and its largest
// magnitude scale alike, so the norm's 1 / rms multiplies the finished product instead (x_scale).
const SSQ: bool = {{ssq}};
const SSQ_PARTS = 16u;
var<workgroup> ssq_part: array<f32, SSQ_PARTS>;
fn row_ssq() -> f32 {
  var s = 0.0;
  for (var j = 0u; j < SSQ_PARTS; j++) { s += ssq_part[j]; }
  return s;
}

// Quarter qi (elements 8qi .. 8qi + 7 of the row: a, b) of chunk qi / 4 rounded to int8 as
// i8_chunk rounds the whole chunk (the same values bit for bit): the four invocations of a chunk
// (neighbouring lids) trade their largest magnitudes and integer sums through workgroup memory,
// so an invocation holds 8 values, not 32 (registers: a staged kernel's prologue sets its
// count). Called by every invocation of the workgroup (it has barriers); `live`: qi is in the row;
// `ss`: with SSQ, this invocation's sum of squares so far (the last call's is the one kept).
fn stage_quarter_i8(lid: u32, qi: u32, nc: u32, a: vec4<f32>, b: vec4<f32>, live: bool, ss: f32) {
  let am = max(abs(a), abs(b));
  qmax[lid] = max(max(am.x, am.y), max(am.z, am.w));
  if (SSQ) { ssq[lid] = ss; }
  workgroupBarrier();
  if (SSQ && lid < SSQ_PARTS) {
    var s = 0.0;
    for (var j = 0u; j < WG / SSQ_PARTS; j++) { s += ssq[lid * (WG / SSQ_PARTS) + j]; }
    ssq_part[lid] = s;
  }
  let g = lid & ~3u;
  let amax = max(max(qmax[g], qmax[g + 1u]), max(qmax[g + 2u], qmax[g + 3u]));
  let inv = select(0.0, 127.0 / amax, amax > 0.0);
  let ia = vec4<i32>(clamp(round(a * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));
  let ib = vec4<i32>(clamp(round(b * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));
  let s = ia + ib;
  qsum[lid] = s.x + s.y + s.z + s.w;
  let c = qi >> 2u;
  let h = qi & 3u;
  if (live) {
    // i8_chunk's words 2h and 2h + 1: lo holds words 0-3 (h = 0, 1), hi words 4-7.
    let row = (h >> 1u) * nc + c;
    let w = 2u * (h & 1u);
    xq[row][w] = pack4xI8(vec4<i32>(ia.x, ia.z, ib.x, ib.z));
    xq[row][w + 1u] = pack4xI8(vec4<i32>(ia.y, ia.w, ib.y, ib.w));
  }
  workgroupBarrier();
  if (live && h == 0u) {
    xd[c] = vec2<f32>(amax / 127.0, 8.0 * f32(qsum[lid] + qsum[lid + 1u] + qsum[lid + 2u] + qsum[lid + 3u]));
  }
  workgroupBarrier();  // qmax, qsum and ssq are rewritten by the next quarters
}

// y in int8 (Q8_OUT: linear_swiglu_linear's gate/up product at one row, for its down product,
// chunk_sums_q8): each run of 16 outputs rounded to multiples of its step dx = max |y| / 127, as
// stage_quarter_i8 rounds x. A 32-output chunk c's eight words are Out1 words 8c .. 8c + 7 in
// i8_chunk's order (the first run's four, then the second's; each run's quarter q as the even
// outputs' word, then the odd outputs'); after the N / 2 / 4 words of runs, vec4 c of the
// steps: (dx, 8 * sum of q) of the first run, then of the second; rows follow each other. The
// outputs of a tile's column groups meet in yq (group g's pair at yq[g]); a tile makes 2 WG / L
// outputs, a whole number of runs (the host keeps L <= 32 and sets Q8_OUT for one-row kernels
// only).
override YQ: u32 = 1u;  // WG where Q8_OUT is set
var<workgroup> yq: array<vec2<f32>, YQ>;
fn q8_run(row: u32, j0: u32, g0: u32) {
  var big = 0.0;
  for (var i = 0u; i < 8u; i++) {
    let v = abs(yq[g0 + i]);
    big = max(big, max(v.x, v.y));
  }
  let inv = select(0.0, 127.0 / big, big > 0.0);
  var words = vec4<u32>();
  var sum = 0;
  for (var q = 0u; q < 2u; q++) {
    let a = yq[g0 + 4u * q];
    let b = yq[g0 + 4u * q + 1u];
    let c = yq[g0 + 4u * q + 2u];
    let d = yq[g0 + 4u * q + 3u];
    let even = vec4<i32>(clamp(round(vec4<f32>(a.x, b.x, c.x, d.x) * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));
    let odd = vec4<i32>(clamp(round(vec4<f32>(a.y, b.y, c.y, d.y) * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));
    words[2u * q] = pack4xI8(even);
    words[2u * q + 1u] = pack4xI8(odd);
    let t = even + odd;
    sum += t.x + t.y + t.z + t.w;
  }
  let run = j0 >> 4u;
  let base = row * (3u * p_n() / 16u);  // a row's words: (N / 2) / 4 of runs, (N / 2) / 8 of steps
  for (var i = 0u; i < 4u; i++) { set_q8(base + 4u * run + i, words[i]); }
  let steps = base + (p_n() >> 3u);
  set_q8(steps + 2u * run, bitcast<u32>(big / 127.0));
  set_q8(steps + 2u * run + 1u, bitcast<u32>(8.0 * f32(sum)));
}

// Elements 32c + 8h .. 32c + 8h + 7 of row `row` of x (rows are K long, a multiple of 32).
fn x8(row: u32, c: u32, h: u32) -> array<vec4<f32>, 2> {
  {{x8}}
}

fn bias(n: u32) -> f32 {
  if ((p_flags() & BIAS) == 0u) { return 0.0; }
  return {{bias_elem}};
}

// The word of S that holds scale i (two f16 scales a word, or one f32).
fn scale_word(i: u32) -> u32 {
  return S[params.scale_base + select(i, i >> 1u, (p_flags() & SCALE_F16) != 0u)];
}

fn q4_scale_word(j: u32) -> u32 { return S[params.scale_base + j]; }
fn scale(i: u32) -> f32 { return q4_scale(i, (p_flags() & SCALE_F16) != 0u); }

// Chunk c of the group's columns `cols`: their packed words and their scales.
struct Chunk {
  q: array<vec4<u32>, C>,
  s: vec4<f32>,
}
fn load_chunk(cols: vec4<u32>, c: u32) -> Chunk {
  let chunks = p_k() >> 5u;
  var ld: Chunk;
  for (var j = 0u; j < C; j++) { ld.q[j] = W[cols[j] * chunks + c]; }
  let g = (c << 5u) >> p_group_shift();
  ld.s = vec4<f32>(scale(cols.x * p_groups() + g), scale(cols.y * p_groups() + g),
                   scale(cols.z * p_groups() + g), scale(cols.w * p_groups() + g));
  return ld;
}

// The first words of this invocation's first tile (its lane's first chunk: each column's first
// packed word and scale word), loaded before the staged variants stage x and not used until the
// end of the kernel (keep), so their trips to memory overlap the staging and the chunk loads
// after it find them in the caches: eight words held (the driver may keep some in local memory),
// not the 20 that loading the chunk itself early would hold through the staging. Assumes the
// workgroup reduction's lane groups; the host sets TOUCH (which compiles it in) for the staged
// variants with that reduction where each workgroup takes one tile (with more, it measured slower; a branch on a flag instead of the
// constant also cost the variants that skip it).
override TOUCH: bool = false;
struct Touched {
  w: vec4<u32>,
  s: vec4<u32>,
}
fn touch_tile(tile: u32, lid: u32) -> Touched {
  var v = Touched();
  let lanes = p_tpc();
  let t = lid % lanes;
  let n0 = tile * (C * WG / lanes) + C * (lid / lanes);
  let chunks = p_k() >> 5u;
  if (tile < p_tiles_n() && n0 < p_n() && t < chunks) {
    let c = group_cols(n0);
    let g = (t << 5u) >> p_group_shift();
    v.w = vec4<u32>(W[c.x * chunks + t].x, W[c.y * chunks + t].x, W[c.z * chunks + t].x, W[c.w * chunks + t].x);
    v.s = vec4<u32>(scale_word(c.x * p_groups() + g), scale_word(c.y * p_groups() + g),
                    scale_word(c.z * p_groups() + g), scale_word(c.w * p_groups() + g));
  }
  return v;
}
fn touch_first(wg: u32, lid: u32) -> Touched {
  if (!TOUCH) { return Touched(); }
  return touch_tile(wg % p_tile_stride(), lid);
}

// Diagnostics (the quant_gemv_stop option): 1 ends each workgroup after staging x, 2 after the
// products, before the reduction and the writes; 3 in the norm prologue (norm.i8) after reading
// x, the residual and the norm weights, before the int8 rounding (the other stages end after
// staging at 3), so that a profile tells the phases' costs apart; what was computed is kept
// (keep_f32) and nothing is written. 0 (the default) runs everything.
override STOP: u32 = 0u;
fn keep_f32(v: f32) {
  if (params.pad2 == 1u) { Out0[0] = bitcast<u32>(v); }
}

// Consumes the touched words where nothing waits for them (pad2 is always 0: no store).
fn keep(v: Touched) {
  if (params.pad2 == 1u) {
    let x = v.w ^ v.s;
    Out0[0] = x.x ^ x.y ^ x.z ^ x.w;
  }
}

// The group's columns from n0 on; missing ones (past N) repeat the last and are not written.
fn group_cols(n0: u32) -> vec4<u32> {
  let last = p_n() - 1u;
  return vec4<u32>(min(n0, last), min(n0 + 1u, last), min(n0 + 2u, last), min(n0 + 3u, last));
}

// The 8 weights of a packed word without their scale, elements 0-3 and 4-7, each times 2^s for
// its nibble's place s (placed_nibbles); the caller multiplies by x * 2^-s (kPlace), exactly.
fn nibbles(w: u32) -> array<vec4<f32>, 2> { return array<vec4<f32>, 2>(placed_nibbles(w), placed_nibbles(w >> 16u)); }

// Chunk c's sums of (nibble - 8) * x for the group's columns (their packed words q), before the
// weights' scales: {{chunk_doc}}.
fn chunk_sums(row: u32, c: u32, q: array<vec4<u32>, C>) -> vec4<f32> {
  {{chunk_sums}}
}

// In f32: each word's 8 weights placed exactly (nibbles), times x * 2^-s.
fn chunk_sums_f32(row: u32, c: u32, q: array<vec4<u32>, C>) -> vec4<f32> {
  var d = vec4<f32>();
  for (var h = 0u; h < 4u; h++) {
    let xv = x8(row, c, h);
    let x0 = xv[0] * kPlace;
    let x1 = xv[1] * kPlace;
    for (var j = 0u; j < C; j++) {
      let a = nibbles(q[j][h]);
      d[j] += dot(a[0], x0) + dot(a[1], x1);
    }
  }
  return d;
}

// In int8 as q8_run writes it (x: a product's y in int8, read where it lies): each run of 16
// with its own step and offset.
fn chunk_sums_q8(row: u32, c: u32, q: array<vec4<u32>, C>) -> vec4<f32> {
  let base = row * (3u * p_k() / 32u);  // a row's vec4s: K / 16 of runs, K / 32 of steps
  let a = X[base + 2u * c];
  let b = X[base + 2u * c + 1u];
  return q8_dots(array<u32, 8>(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w), bitcast<vec4<f32>>(X[base + (p_k() >> 4u) + c]), q);
}

// A chunk's two runs of int8 x (its eight words xw, their steps and offsets e) against the
// group's columns' packed words q.
fn q8_dots(xw: array<u32, 8>, e: vec4<f32>, q: array<vec4<u32>, C>) -> vec4<f32> {
  var d0 = vec4<i32>();
  var d1 = vec4<i32>();
  for (var h = 0u; h < 2u; h++) {
    for (var j = 0u; j < C; j++) {
      let w0 = q[j][h];
      let w1 = q[j][h + 2u];
      d0[j] += dot4I8Packed(w0 & 0x0f0f0f0fu, xw[2u * h]) + dot4I8Packed((w0 >> 4u) & 0x0f0f0f0fu, xw[2u * h + 1u]);
      d1[j] += dot4I8Packed(w1 & 0x0f0f0f0fu, xw[2u * h + 4u]) + dot4I8Packed((w1 >> 4u) & 0x0f0f0f0fu, xw[2u * h + 5u]);
    }
  }
  return (vec4<f32>(d0) - e.y) * e.x + (vec4<f32>(d1) - e.w) * e.z;
}

// In int8 (x staged by stage_quarter_i8): each weight word's low and high nibbles against the
// even and odd elements' bytes, four products per dot4I8Packed, exact in i32, then the offset of
// 8 and x's scale.
fn chunk_sums_i8(c: u32, q: array<vec4<u32>, C>) -> vec4<f32> {
  let nc = p_k() >> 5u;
  let a = xq[c];
  let b = xq[nc + c];
  let xw = array<u32, 8>(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
  var d = vec4<i32>();
  for (var h = 0u; h < 4u; h++) {
    for (var j = 0u; j < C; j++) {
      let w = q[j][h];
      d[j] += dot4I8Packed(w & 0x0f0f0f0fu, xw[2u * h]) + dot4I8Packed((w >> 4u) & 0x0f0f0f0fu, xw[2u * h + 1u]);
    }
  }
  let e = xd[c];
  return (vec4<f32>(d) - e.y) * e.x;
}

// The gated MLP in one dispatch (PERSIST: linear_swiglu_linear's one-row steps where the
// quant_mlp_persist option lets them): the workgroups make the gate/up product with its int8 act
// epilogue as above, count the tiles they made, wait until all T1 = p_tiles_n() are, then make
// their tiles of the down product of that act (every G-th, G = p_tile_stride(), the workgroups
// launched). WebGPU does not promise that a dispatch's workgroups run at once, so no wait
// depends on it: a workgroup claims its gate/up tiles as it starts (claim word w holds a bit
// for each of tiles w, w + G, ...: one atomic or), makes those it got, and a wait that lasts
// PATIENCE polls claims the tiles of a workgroup that has not started and makes them itself; the
// late one finds them claimed, and makes its down tiles when it runs. A claim is made by a
// running workgroup that waits for nothing until it has made the tile, so every wait ends where
// started workgroups keep running, as on a GPU (a CPU adapter may suspend one while another
// polls: the host launches one workgroup there); a wait that still lasts SPIN_LIMIT polls sets
// the fault word, which the program reads with every readback (an error, not a hang). Out1
// (atomic here: act's words are read with atomic loads, past any cache that could hold them
// stale) holds the handoff words (runtime/handoff_pool.h: DONE counts the tiles made, EXITS the
// workgroups finished, FAULT is the fault word, NEXT counts the claim words handed to waits),
// min(G, T1) claim words from D_CLAIMS, then act's words from D_ACT; the last workgroup to
// finish sets the counts and claims back to 0 for the next dispatch. Every node's dispatch uses
// the same buffer, so the claim words lie where no node's act does (D_ACT past the most claim
// words any node has), and neither shares a 128-byte line with the polled count (atomics on one
// line take turns). The down product's sizes are
// pipeline constants (D_*); its weight (nibbles, then scales from word D_SCALE_BASE) is bound as
// X, and x as Bias (x4 reads it; no bias here); its output is Out2.
override PERSIST: bool = false;
override D_N: u32 = 1u;
override D_K: u32 = 32u;
override D_TPC: u32 = 1u;
override D_TILES: u32 = 0u;
override D_GROUP_SHIFT: u32 = 5u;
override D_GROUPS: u32 = 1u;
override D_SCALE_BASE: u32 = 0u;
override D_SCALE_F16: bool = false;
override D_CLAIMS: u32 = 32u;
override D_ACT: u32 = 64u;
// Every wait sets the fault word and goes on at once: a diagnostic (the quant_mlp_persist_fault
// option) that tests the program's check.
override FAULT_NOW: bool = false;
// Workgroup 0 claims none of its gate/up tiles, leaving them to a wait: a diagnostic (the
// quant_mlp_persist_help option) with which the tests see the waits make them.
override HELP_TEST: bool = false;
const DONE = 0u;
const EXITS = 1u;
const FAULT = 2u;
const NEXT = 3u;
const PATIENCE = 64u;
const SPIN_LIMIT = 1u << 22u;
var<workgroup> claim_s: vec2<u32>;
{{persist_fns}}

fn down_word(i: u32) -> u32 { return X[i >> 2u][i & 3u]; }
fn down_scale(i: u32) -> f32 {
  if (D_SCALE_F16) { return unpack2x16float(down_word(D_SCALE_BASE + (i >> 1u)))[i & 1u]; }
  return bitcast<f32>(down_word(D_SCALE_BASE + i));
}
// act staged in workgroup memory after the handoff (ACTS = its words / 4 where the host stages
// it, else 1): the workgroup's invocations read neighbouring words (a warp's loads then touch
// 128 contiguous bytes, where a lane reading its chunk's words touched a 32-byte sector of its
// own each), once, and the down tiles read it from there.
override ACTS: u32 = 1u;
var<workgroup> acts: array<vec4<u32>, ACTS>;
fn stage_act(lid: u32) {
  for (var i = lid; i < 4u * ACTS; i += WG) { acts[i >> 2u][i & 3u] = act_word(i); }
  workgroupBarrier();
}

// Chunk c of the down product for the group's columns `cols`, act read as q8_run wrote it.
fn down_chunk(cols: vec4<u32>, c: u32) -> vec4<f32> {
  let chunks = D_K >> 5u;
  var q: array<vec4<u32>, C>;
  for (var j = 0u; j < C; j++) {
    q[j] = X[cols[j] * chunks + c];
  }
  let g = (c << 5u) >> D_GROUP_SHIFT;
  let s = vec4<f32>(down_scale(cols.x * D_GROUPS + g), down_scale(cols.y * D_GROUPS + g),
                    down_scale(cols.z * D_GROUPS + g), down_scale(cols.w * D_GROUPS + g));
  var xw: array<u32, 8>;
  let st = D_K / 4u + 4u * c;  // the chunk's steps and offsets, after the K / 4 words of runs
  var e: vec4<f32>;
  if (ACTS > 1u) {
    let a = acts[2u * c];
    let b = acts[2u * c + 1u];
    xw = array<u32, 8>(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
    e = bitcast<vec4<f32>>(acts[st >> 2u]);
  } else {
    for (var i = 0u; i < 8u; i++) { xw[i] = act_word(8u * c + i); }
    e = bitcast<vec4<f32>>(vec4<u32>(act_word(st), act_word(st + 1u), act_word(st + 2u), act_word(st + 3u)));
  }
  return s * q8_dots(xw, e, q);
}

// Whether the workgroups claim their tiles: not where one workgroup makes more than 32 (G = 1,
// the host's choice on a CPU adapter), which has no one to wait for.
fn claiming() -> bool { return PERSIST && (p_tile_stride() > 1u || p_tiles_n() <= 32u); }

// The bits of claim word w (< min(G, T1)): one for each of its tiles w, w + G, ... below T1.
fn claim_bits(w: u32) -> u32 {
  let n = (p_tiles_n() - w + p_tile_stride() - 1u) / p_tile_stride();
  return select((1u << n) - 1u, 0xffffffffu, n >= 32u);
}

// The wait (one invocation; the caller hands its answer to the workgroup): (T1, 0) once DONE
// counts every gate/up tile; after PATIENCE polls, (w, bits): the tiles of claim word w that
// this call claimed (of the next claim word handed out that had any left), for the caller to
// make before it waits again.
fn wait_or_claim() -> vec2<u32> {
  let t1 = p_tiles_n();
  if (FAULT_NOW) {
    sync_store(FAULT, 1u);
    return vec2<u32>(t1, 0u);
  }
  var polls = 0u;
  var total = 0u;
  loop {
    if (sync_load(DONE) >= t1) { return vec2<u32>(t1, 0u); }
    polls++;
    total++;
    if (total >= SPIN_LIMIT) {  // a claimed tile that is not being made: see above
      sync_store(FAULT, 1u);
      return vec2<u32>(t1, 0u);
    }
    if (polls >= PATIENCE) {
      // The claim words are handed to the waits from the last down (NEXT counts those handed
      // out): a GPU starts workgroups in about the order of their indices, so the last ones are
      // those likeliest not to have started, and every word is looked at by one wait at most (a
      // scan of every word by every wait took ~200 us a dispatch where half of 512 workgroups
      // had not started).
      let words = min(p_tile_stride(), t1);
      loop {
        let i = sync_add(NEXT, 1u);
        if (i >= words) { break; }
        let w = words - 1u - i;
        let want = claim_bits(w);
        let got = want & ~sync_or(D_CLAIMS + w, want);
        if (got != 0u) { return vec2<u32>(w, got); }
      }
      polls = 0u;  // every tile is claimed, by workgroups that are making them
    }
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32{{builtins}}) {
  let wg = wgx_workgroup_index(wid, nwg);
  let m0 = (wg / p_tile_stride()) * R;
  if (m0 >= params.m) { return; }
  let rows = min(R, params.m - m0);
  var touched = touch_first(wg, lid);
  // PERSIST: lid 0 claims the workgroup's gate/up tiles now; the answer is needed after staging.
  var claimed = 0u;
  if (claiming() && lid == 0u && wg < min(p_tile_stride(), p_tiles_n()) && !(HELP_TEST && wg == 0u)) {
    let want = claim_bits(wg);
    claimed = want & ~sync_or(D_CLAIMS + wg, want);
  }
  var x_scale = 1.0;  // the norm prologue's 1 / rms with x in int8 (SSQ): the product's factor
  {{stage}}
  {{lane_groups}}
  if (STOP == 1u || STOP >= 3u) {
    keep_f32(xs[lid % XS].x + bitcast<f32>(xq[lid % XQ].x) + xd[lid % XD].x);
    keep(touched);
    return;
  }
  // Column tiles wg % G, + G, ... (G = p_tile_stride() workgroups per row of x: tiles_n, one
  // tile each, unless x is staged, where fewer workgroups share the staging); PERSIST: those of
  // them it claimed, then those of any claim word that a wait claims.
  var w = wg % p_tile_stride();
  var mine = 0xffffffffu;  // the tiles w + j * G to make: bit j
  if (claiming()) {
    if (lid == 0u) { claim_s = vec2<u32>(w, claimed); }
    mine = workgroupUniformLoad(&claim_s).y;
  }
  loop {
    for (var tile = w; tile < p_tiles_n(); tile += p_tile_stride()) {
      if (claiming() && (mine & (1u << ((tile - w) / p_tile_stride()))) == 0u) { continue; }
      let n0 = tile * (C * WG / lanes) + C * group;
      let chunks = p_k() >> 5u;
      let cols = group_cols(n0);
      var acc: array<vec4<f32>, R>;  // [row][column]
      for (var r = 0u; r < R; r++) { acc[r] = vec4<f32>(); }
      if (n0 < p_n()) {
        for (var c = t; c < chunks; c += lanes) {
          let ld = load_chunk(cols, c);
          let q = ld.q;
          let s = ld.s;
          // Constant trip counts and no early exits: the loops unroll and the arrays stay in
          // registers (a dynamic index would put them in slow per-invocation memory).
          for (var r = 0u; r < R; r++) {
            if (r < rows) { acc[r] += s * chunk_sums(m0 + r, c, q); }
          }
        }
      }
      if (STOP == 2u) {
        keep_f32(acc[0].x + acc[0].y + acc[0].z + acc[0].w);
        continue;
      }
      for (var r = 0u; r < R; r++) {
        if (r < rows) {
          {{reduce}}
          if (t == 0u && n0 < p_n()) {
            // Columns past N (clamped) are not written.
            let v = sum * x_scale + vec4<f32>(bias(cols.x), bias(cols.y), bias(cols.z), bias(cols.w));
            if ((p_flags() & SWIGLU) != 0u) {
              // Columns (n0, n0 + 1) and (n0 + 2, n0 + 3) are gate/up pairs: outputs j and j + 1.
              let j = n0 / 2u;
              let y = vec2<f32>(silu(v.x) * v.y, silu(v.z) * v.w);
              if ((p_flags() & Q8_OUT) != 0u) { yq[group] = y; }
              if ((p_flags() & OUT_F16) != 0u) {
                put2(m0 + r, j, y);  // N / 2 even: j + 1 exists
              } else {
                put(m0 + r, j, y.x);
                if (n0 + 2u < p_n()) { put(m0 + r, j + 1u, y.y); }
              }
            } else if ((p_flags() & OUT_F16) != 0u) {
              // N and every split are even, so n0 + 1 and n0 + 3 exist when n0 and n0 + 2 do.
              put2(m0 + r, n0, v.xy);
              if (n0 + 2u < p_n()) { put2(m0 + r, n0 + 2u, v.zw); }
            } else {
              for (var j = 0u; j < C; j++) {
                if (n0 + j < p_n()) { put(m0 + r, n0 + j, v[j]); }
              }
            }
          }
        }
      }
      if ((p_flags() & Q8_OUT) != 0u) {
        workgroupBarrier();  // every group's pair is in yq
        let per_tile = 2u * WG / lanes;
        let j0 = tile * per_tile + 16u * lid;
        if (lid < per_tile / 16u && j0 < p_n() / 2u) { q8_run(m0, j0, 8u * lid); }
      }
      workgroupBarrier();  // red's (and yq's) slots are rewritten by the next tile
    }
    if (!claiming()) {
      if (FAULT_NOW && lid == 0u) { sync_store(FAULT, 1u); }
      break;
    }
    storageBarrier();  // the tiles' act words are written
    if (lid == 0u) {
      if (mine != 0u) { sync_add(DONE, countOneBits(mine)); }
      claim_s = wait_or_claim();
    }
    let next = workgroupUniformLoad(&claim_s);
    if (next.y == 0u) { break; }
    w = next.x;
    mine = next.y;
  }
  if (PERSIST) {
    if (ACTS > 1u) { stage_act(lid); }
    let workgroups = p_tile_stride();
    let li = group * lanes + t;  // this invocation's place in the workgroup's lane groups
    {
      let lanes = D_TPC;
      let group = li / lanes;
      let t = li % lanes;
      for (var tile = wg; tile < D_TILES; tile += workgroups) {
        let n0 = tile * (C * WG / lanes) + C * group;
        let last = D_N - 1u;
        let cols = vec4<u32>(min(n0, last), min(n0 + 1u, last), min(n0 + 2u, last), min(n0 + 3u, last));
        var acc: array<vec4<f32>, R>;
        for (var r = 0u; r < R; r++) { acc[r] = vec4<f32>(); }
        if (n0 < D_N) {
          for (var c = t; c < (D_K >> 5u); c += lanes) { acc[0] += down_chunk(cols, c); }
        }
        for (var r = 0u; r < 1u; r++) {
          {{reduce}}
          if (t == 0u && n0 < D_N) {
            for (var j = 0u; j < C; j++) {
              if (n0 + j < D_N) { Out2[n0 + j] = bitcast<u32>(sum[j]); }
            }
          }
        }
        workgroupBarrier();  // red's slots are rewritten by the next tile
      }
    }
    // The last workgroup out sets the counts and claims back to 0 (every other has stopped
    // using them), a claim word per invocation (one invocation storing them all cost ~4 us a
    // dispatch on the H200).
    if (lid == 0u) { claim_s.x = sync_add(EXITS, 1u) + 1u; }
    if (workgroupUniformLoad(&claim_s).x == workgroups) {
      for (var i = lid; i < min(workgroups, p_tiles_n()); i += WG) { sync_store(D_CLAIMS + i, 0u); }
      if (lid == 0u) {
        sync_store(DONE, 0u);
        sync_store(EXITS, 0u);
        sync_store(NEXT, 0u);
      }
    }
  }
  keep(touched);
}
