// sample_token and sample_token_penalized: the next token drawn from one row of logits, in one
// dispatch (sample_token.cpp says what the ops compute; sample_params.h the words of S);
// sample_rows: a token for each of params.rows rows of logits, each with its own 8 words of S and
// counter (Counters), in the same dispatch: workgroup w takes chunk w % chunks of row w / chunks,
// and the last of a row's workgroups merges that row's chunks.
//
// With a seen set (params.seen_words > 0: sample_token_penalized), the logits of the tokens it
// holds are penalized as they are loaded (words 6 and 7), and the token picked joins the set.
// sample_rows_penalized: Seen holds params.seen_slots sets, and row r's is set Slots[r] (none where
// that is outside them).
//
// Every workgroup takes a chunk of CHUNK logits, PER consecutive ones per invocation, as keys: a
// u32 per value that orders like the value (0 for what cannot be picked). Greedy (k = 0): the
// chunk's largest key, the lowest index on ties. Sampling: the chunk's k largest keys, found by a
// radix select over the 8-bit digits from the top (a count per digit in workgroup memory; the
// digit where the k-th largest lies, then the next digit within it), ties with the k-th kept up
// to CAP, the lowest indices first; those candidates and the chunk's threshold go to Cand. Then
// the workgroups count themselves, and the last to arrive merges: greedy, the chunks' largest;
// sampling, the same radix select over the candidates at or above the largest chunk threshold
// (no other can be among the k largest), the kept ones (at most FCAP) sorted by value, their
// weights exp(s - max) summed in that order, top-p and min-p cuts (each keeps a prefix of the
// sorted list), and the draw: the first token whose cumulative weight passes u * the kept total,
// u from a hash of the seed and the step's position. Then it sets the count back to 0: no
// workgroup waits for another.
#include "workgroup.wgsl"
struct Params {
  vocab: u32,
  chunks: u32,   // workgroups a row: ceil(vocab / CHUNK)
  counter: u32,  // the step's position: the random stream's index (one row)
  seen_words: u32,  // words of Seen (0: no seen set, no penalty)
  rows: u32,        // rows of X (1, or sample_rows' count)
  per_row: u32,     // 1: each row's counter from Counters (sample_rows), 0: params.counter
  seen_slots: u32,  // sets in Seen, a row's chosen by Slots (sample_rows_penalized); 0: one set
  pad0: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<f32>;  // [rows, vocab]
// A row's sampling words: top_k (0: greedy), 1 / temperature, top_p, min_p (f32 bits), seed low
// and high, the repetition penalty and its inverse (f32 bits; 0: off).
@group(0) @binding(2) var<storage, read> S: array<u32>;
@group(0) @binding(3) var<storage, read_write> Out: array<u32>;  // a token a row
// Per chunk of each row, CSTRIDE words: candidate count, threshold key, CAP keys, CAP indices.
@group(0) @binding(4) var<storage, read_write> Cand: array<u32>;
@group(0) @binding(5) var<storage, read_write> Count: array<atomic<u32>>;  // a row's arrivals
// The seen set: token t is bit t % 32 of word t / 32 (a word of its own where there is none).
@group(0) @binding(6) var<storage, read_write> Seen: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read> Counters: array<u32>;  // per_row: a row's counter
@group(0) @binding(8) var<storage, read> Slots: array<u32>;     // seen_slots > 0: a row's set

const WG = 256u;
const CHUNK = 2048u;    // kChunk on the host
const PER = CHUNK / WG;
const CAP = 128u;       // kMaxTopK on the host: candidates a chunk keeps
const FCAP = 256u;      // candidates the draw keeps (one per invocation)
const CSTRIDE = 2u + 2u * CAP;
const NONE = 0xffffffffu;

// Orders like the value: negative values bit-flipped, others with the sign bit set; -0 as +0.
// NaN, and the infinities where `finite` is asked for, become 0, below every other key.
fn key_of(x: f32, finite: bool) -> u32 {
  var b = bitcast<u32>(x);
  if ((b & 0x7f800000u) == 0x7f800000u && (finite || (b & 0x007fffffu) != 0u)) { return 0u; }
  if (b == 0x80000000u) { b = 0u; }
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

fn value_of(k: u32) -> f32 {
  return bitcast<f32>(select(~k, k & 0x7fffffffu, (k & 0x80000000u) != 0u));
}

// A 32-bit integer hash (xor-shift-multiply rounds); chained over the seed's halves and the
// counter, it gives the draw's u. sample_params.h has the host's copy.
fn mix32(x: u32) -> u32 {
  var h = x;
  h ^= h >> 16u;
  h *= 0x7feb352du;
  h ^= h >> 15u;
  h *= 0x846ca68bu;
  h ^= h >> 16u;
  return h;
}
fn uniform01(seed_lo: u32, seed_hi: u32, counter: u32) -> f32 {
  let h = mix32(seed_lo ^ mix32(seed_hi ^ mix32(counter + 0x9e3779b9u)));
  return f32(h >> 8u) * (1.0 / 16777216.0);
}

var<workgroup> hist: array<atomic<u32>, 256>;
var<workgroup> groups: array<u32, 16>;
var<workgroup> group_sel: u32;
var<workgroup> group_need: u32;
var<workgroup> bin_sel: u32;
var<workgroup> bin_need: u32;
var<workgroup> bin_all: u32;  // 1 when every key of the chosen digit is needed
var<workgroup> scan_v: array<f32, 256>;
var<workgroup> scan_g: array<f32, 16>;
var<workgroup> red_k: array<u32, 256>;  // greedy's tree; the draw's candidates as gathered
var<workgroup> red_i: array<u32, 256>;
var<workgroup> sorted_k: array<u32, 256>;
var<workgroup> sorted_i: array<u32, 256>;
var<workgroup> chunk_n: array<u32, 256>;
// The merge's largest chunk threshold, kept count, longest list, winner, tokens after the cuts.
var<workgroup> shared_u: array<atomic<u32>, 5>;
var<workgroup> kept_total: f32;
var<workgroup> flag_s: u32;  // a value made uniform (workgroupUniformLoad)
var<workgroup> last_s: u32;
var<private> row: u32;    // this workgroup's row of X
var<private> cbase: u32;  // its row's first chunk in Cand: row * chunks
var<private> sbase: u32;  // its row's first word of S: row * 8
var<private> seen_base: u32;  // its row's first word of Seen
var<private> has_seen: bool;  // its row has a seen set

// The digit (of the 256 counted in hist) that holds the need-th largest key, counting from the
// top, and how many keys of it are needed: bin_sel / bin_need, bin_sel NONE when hist counts
// fewer than need. Called by the whole workgroup; 16 invocations look at 16 digits each.
fn pick_bin(lid: u32, need: u32) {
  if (lid == 0u) {
    group_sel = NONE;
    bin_sel = NONE;
  }
  if (lid < 16u) {
    var s = 0u;
    for (var i = 0u; i < 16u; i++) { s += atomicLoad(&hist[lid * 16u + i]); }
    groups[lid] = s;
  }
  workgroupBarrier();
  if (lid < 16u) {
    var above = 0u;
    for (var g = lid + 1u; g < 16u; g++) { above += groups[g]; }
    if (above < need && need <= above + groups[lid]) {
      group_sel = lid;
      group_need = need - above;
    }
  }
  workgroupBarrier();
  let g = group_sel;
  if (lid < 16u && g != NONE) {
    var above = 0u;
    for (var i = lid + 1u; i < 16u; i++) { above += atomicLoad(&hist[g * 16u + i]); }
    let h = atomicLoad(&hist[g * 16u + lid]);
    if (above < group_need && group_need <= above + h) {
      bin_sel = g * 16u + lid;
      bin_need = group_need - above;
      bin_all = select(0u, 1u, group_need - above == h);
    }
  }
  workgroupBarrier();
}

// The exclusive prefix sum of v over the invocations (x) and the total (y), in f32 (exact for
// counts below 2^24). Called by the whole workgroup.
fn scan(lid: u32, v: f32) -> vec2<f32> {
  scan_v[lid] = v;
  workgroupBarrier();
  if (lid < 16u) {
    var s = 0.0;
    for (var i = 0u; i < 16u; i++) { s += scan_v[lid * 16u + i]; }
    scan_g[lid] = s;
  }
  workgroupBarrier();
  var before = 0.0;
  var total = 0.0;
  for (var g = 0u; g < 16u; g++) {
    let s = scan_g[g];
    if (g < lid / 16u) { before += s; }
    total += s;
  }
  for (var i = lid & ~15u; i < lid; i++) { before += scan_v[i]; }
  workgroupBarrier();  // scan_v is written again by the next call
  return vec2<f32>(before, total);
}

// The merge reads its entries e < n (chunk e / nmax, slot e % nmax) a batch at a time: BATCH
// of them per invocation (e, e + WG, ...), every load issued before any is used, since each trip
// to memory costs more than the work on what it brings.
const BATCH = 8u;
struct Batch {
  key: array<u32, BATCH>,  // NONE past n or past the chunk's count
  id: array<u32, BATCH>,
}
fn load_batch(e0: u32, n: u32, nmax: u32, ids: bool) -> Batch {
  var b: Batch;
  for (var i = 0u; i < BATCH; i++) {
    let e = e0 + i * WG;
    let c = min(e / nmax, params.chunks - 1u);
    let at = (cbase + c) * CSTRIDE + 2u + e % nmax;
    let k = Cand[at];
    if (ids) { b.id[i] = Cand[at + CAP]; }
    b.key[i] = select(NONE, k, e < n && e % nmax < chunk_n[c]);
  }
  return b;
}

// The radix key of entry i of a batch in a select: mode 1, its key where it is at least `lo`;
// mode 2, where its key is `lo`, its inverted index (the largest such keys are the lowest
// indices). 0: not counted.
fn select_key(mode: u32, b: ptr<function, Batch>, i: u32, lo: u32) -> u32 {
  let k = (*b).key[i];
  if (k == NONE) { return 0u; }
  if (mode == 1u) { return select(0u, k, k >= lo); }
  return select(0u, ~(*b).id[i], k == lo);
}

// The need-th largest nonzero key of a select (see select_key), or, where every key of the digit
// it lies in is needed, that digit's smallest possible key (the same keys lie at or above it); 1
// (every nonzero key) when fewer than need are nonzero. Called by the whole workgroup.
fn radix_select(lid: u32, mode: u32, keys: ptr<function, array<u32, PER>>, n: u32, nmax: u32, lo: u32,
                need0: u32) -> u32 {
  var prefix = 0u;
  var need = need0;
  for (var digit = 0u; digit < 4u; digit++) {
    let shift = 24u - 8u * digit;
    let fixed = select(0u, 0xffffffffu << (32u - 8u * digit), digit > 0u);
    atomicStore(&hist[lid], 0u);
    workgroupBarrier();
    if (mode == 0u) {
      for (var j = 0u; j < PER; j++) {
        let k = (*keys)[j];
        if (k != 0u && (k & fixed) == prefix) { atomicAdd(&hist[(k >> shift) & 255u], 1u); }
      }
    } else {
      for (var e = lid; e < n; e += BATCH * WG) {
        var b = load_batch(e, n, nmax, mode == 2u);
        for (var i = 0u; i < BATCH; i++) {
          let k = select_key(mode, &b, i, lo);
          if (k != 0u && (k & fixed) == prefix) { atomicAdd(&hist[(k >> shift) & 255u], 1u); }
        }
      }
    }
    workgroupBarrier();
    pick_bin(lid, need);
    let bin = workgroupUniformLoad(&bin_sel);
    if (bin == NONE) { return 1u; }  // only at the first digit
    prefix |= bin << shift;
    need = bin_need;
    if (workgroupUniformLoad(&bin_all) == 1u) { break; }
  }
  return prefix;
}

// The token picked (NONE: nothing could be), which joins the seen set.
fn pick(token: u32) {
  Out[row] = token;
  if (has_seen && token != NONE && token / 32u < params.seen_words) {
    atomicOr(&Seen[seen_base + token / 32u], 1u << (token % 32u));
  }
}

fn better(ka: u32, ia: u32, kb: u32, ib: u32) -> bool {
  return ka > kb || (ka == kb && ia < ib);
}

// The workgroup's best (key, index) of every invocation's, in red_k[0] / red_i[0]. Called by the
// whole workgroup.
fn best_of_all(lid: u32, bk: u32, bi: u32) {
  red_k[lid] = bk;
  red_i[lid] = bi;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s && better(red_k[lid + s], red_i[lid + s], red_k[lid], red_i[lid])) {
      red_k[lid] = red_k[lid + s];
      red_i[lid] = red_i[lid + s];
    }
    workgroupBarrier();
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = wgx_workgroup_index(wid, nwg);
  if (wg >= params.rows * params.chunks) { return; }
  row = wg / params.chunks;
  let chunk = wg % params.chunks;
  cbase = row * params.chunks;
  sbase = row * 8u;
  seen_base = 0u;
  has_seen = params.seen_words > 0u;
  if (params.seen_slots > 0u) {
    let slot = Slots[row];
    has_seen = slot < params.seen_slots;
    seen_base = select(0u, slot * params.seen_words, has_seen);
  }
  if (lid == 0u) { flag_s = min(bitcast<u32>(max(bitcast<i32>(S[sbase]), 0)), CAP); }
  let k = workgroupUniformLoad(&flag_s);
  let greedy = k == 0u;
  let inv_t = bitcast<f32>(S[sbase + 1u]);
  let first = chunk * CHUNK + lid * PER;
  let xbase = row * params.vocab;
  // PER divides 32: an invocation's tokens are bits of one word of the seen set.
  var seen = 0u;
  let penalty = bitcast<f32>(S[sbase + 6u]);
  let inv_penalty = bitcast<f32>(S[sbase + 7u]);
  if (has_seen && S[sbase + 6u] != 0u && first / 32u < params.seen_words) {
    seen = atomicLoad(&Seen[seen_base + first / 32u]) >> (first % 32u);
  }
  var keys: array<u32, PER>;
  for (var j = 0u; j < PER; j++) {
    keys[j] = 0u;
    if (first + j < params.vocab) {
      var x = X[xbase + first + j];
      if (((seen >> j) & 1u) != 0u) { x = select(x * inv_penalty, x * penalty, x < 0.0); }
      keys[j] = key_of(select(x * inv_t, x, greedy), !greedy);
    }
  }
  let base = (cbase + chunk) * CSTRIDE;
  if (greedy) {
    var bk = 0u;
    var bi = NONE;
    for (var j = 0u; j < PER; j++) {
      if (keys[j] > bk) {
        bk = keys[j];
        bi = first + j;
      }
    }
    best_of_all(lid, bk, bi);
    if (lid == 0u) {
      Cand[base] = select(0u, 1u, red_k[0] != 0u);
      Cand[base + 1u] = red_k[0];
      Cand[base + 2u] = red_k[0];
      Cand[base + 2u + CAP] = red_i[0];
    }
  } else {
    let t = radix_select(lid, 0u, &keys, 0u, 1u, 0u, k);
    var gt = 0u;
    var eq = 0u;
    for (var j = 0u; j < PER; j++) {
      gt += select(0u, 1u, keys[j] > t);
      eq += select(0u, 1u, keys[j] == t);
    }
    let sg = scan(lid, f32(gt));
    let se = scan(lid, f32(eq));
    var at_gt = u32(sg.x);
    var at_eq = u32(sg.y) + u32(se.x);
    for (var j = 0u; j < PER; j++) {
      if (keys[j] > t) {
        Cand[base + 2u + at_gt] = keys[j];
        Cand[base + 2u + CAP + at_gt] = first + j;
        at_gt++;
      } else if (keys[j] == t && at_eq < CAP) {
        Cand[base + 2u + at_eq] = keys[j];
        Cand[base + 2u + CAP + at_eq] = first + j;
        at_eq++;
      }
    }
    if (lid == 0u) {
      Cand[base] = min(u32(sg.y) + u32(se.y), CAP);
      Cand[base + 1u] = t;
    }
  }

  // Every workgroup counts itself once its candidates are written (the barrier); the one that
  // brings the count to every workgroup's merges them.
  storageBarrier();
  if (lid == 0u) {
    let done = atomicAdd(&Count[row], 1u) + 1u;
    last_s = select(0u, 1u, done == params.chunks);
    if (done == params.chunks) { atomicStore(&Count[row], 0u); }
  }
  if (workgroupUniformLoad(&last_s) == 0u) { return; }

  let chunks = params.chunks;
  if (greedy) {
    var bk = 0u;
    var bi = NONE;
    for (var c = lid; c < chunks; c += WG) {
      let cb = (cbase + c) * CSTRIDE;
      let kc = Cand[cb + 2u];
      let ic = Cand[cb + 2u + CAP];
      if (Cand[cb] != 0u && better(kc, ic, bk, bi)) {
        bk = kc;
        bi = ic;
      }
    }
    best_of_all(lid, bk, bi);
    if (lid == 0u) { pick(select(NONE, red_i[0], red_k[0] != 0u)); }
    return;
  }

  // The largest chunk threshold (no key below it is among the k largest), the chunks' counts
  // and the longest list.
  if (lid < 5u) { atomicStore(&shared_u[lid], select(0u, NONE, lid == 3u)); }
  chunk_n[lid] = 0u;
  workgroupBarrier();
  if (lid < chunks) {
    chunk_n[lid] = Cand[(cbase + lid) * CSTRIDE];
    atomicMax(&shared_u[0], Cand[(cbase + lid) * CSTRIDE + 1u]);
    atomicMax(&shared_u[2], chunk_n[lid]);
  }
  workgroupBarrier();
  let lo = atomicLoad(&shared_u[0]);
  let nmax = max(atomicLoad(&shared_u[2]), 1u);
  let n = chunks * nmax;
  var unused: array<u32, PER>;
  // The select counts only keys at or above lo, so where it returns a digit's smallest possible
  // key, that may lie below lo: the keys between it and lo (which chunks kept) are not among the
  // k largest.
  let t = max(radix_select(lid, 1u, &unused, n, nmax, lo, k), lo);
  // Keys above t (fewer than k), and those at t up to FCAP in all, the lowest indices first.
  var gt = 0u;
  var eq = 0u;
  for (var e = lid; e < n; e += BATCH * WG) {
    let b = load_batch(e, n, nmax, false);
    for (var i = 0u; i < BATCH; i++) {
      let key = b.key[i];
      gt += select(0u, 1u, key != NONE && key > t);
      eq += select(0u, 1u, key == t);
    }
  }
  let ngt = u32(scan(lid, f32(gt)).y);
  let neq = u32(scan(lid, f32(eq)).y);
  if (lid == 0u) { flag_s = select(0u, 1u, ngt + neq > FCAP); }
  var last_tie = NONE;  // ties with an index up to this are kept
  if (workgroupUniformLoad(&flag_s) == 1u) { last_tie = ~radix_select(lid, 2u, &unused, n, nmax, t, FCAP - ngt); }
  for (var e = lid; e < n; e += BATCH * WG) {
    let b = load_batch(e, n, nmax, true);
    for (var i = 0u; i < BATCH; i++) {
      let key = b.key[i];
      if (key != NONE && (key > t || (key == t && b.id[i] <= last_tie))) {
        let at = atomicAdd(&shared_u[1], 1u);
        red_k[at] = key;
        red_i[at] = b.id[i];
      }
    }
  }
  workgroupBarrier();
  let kept = atomicLoad(&shared_u[1]);
  // Sorted by value, then index: each candidate's rank is how many come before it.
  if (lid < kept) {
    let mk = red_k[lid];
    let mi = red_i[lid];
    var rank = 0u;
    for (var j = 0u; j < kept; j++) { rank += select(0u, 1u, better(red_k[j], red_i[j], mk, mi)); }
    sorted_k[rank] = mk;
    sorted_i[rank] = mi;
  }
  workgroupBarrier();
  var w = 0.0;
  if (lid < kept) { w = exp(value_of(sorted_k[lid]) - value_of(sorted_k[0])); }
  let cum = scan(lid, w);  // weight before this one, total
  let top_p = bitcast<f32>(S[sbase + 2u]);
  let min_p = bitcast<f32>(S[sbase + 3u]);
  // top-p keeps a token while the tokens before it hold less than top_p of the weight; min-p
  // while its weight is at least min_p of the largest (1). Both keep a prefix.
  let keep = lid < kept && (lid == 0u || cum.x < top_p * cum.y) && w >= min_p;
  if (keep) { atomicMax(&shared_u[4], lid + 1u); }
  workgroupBarrier();
  let m = atomicLoad(&shared_u[4]);
  if (lid + 1u == m) { kept_total = cum.x + w; }
  workgroupBarrier();
  let counter = select(params.counter, Counters[row], params.per_row != 0u);
  let goal = uniform01(S[sbase + 4u], S[sbase + 5u], counter) * kept_total;
  if (lid < m && cum.x + w > goal) { atomicMin(&shared_u[3], lid); }
  workgroupBarrier();
  if (lid == 0u) {
    let win = min(atomicLoad(&shared_u[3]), m - 1u);
    pick(select(NONE, sorted_i[win], kept > 0u));
  }
}
