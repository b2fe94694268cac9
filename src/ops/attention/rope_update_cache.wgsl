// rope_update_cache: q, k and v of one step ([B, S, H, D], H = Hq for q, Hkv for k and v) in one
// pass, as rows of D channels: the q rows first, then the k rows, then the v rows. Row r of a
// tensor is (b, s, h) with r = (b * S + s) * H + h, token s at position input_pos + s of cache
// slot b. rope_update_cache_rows (continuous batching, B = 1): token s at the (slot, position)
// that Rows[s] gives (token_rows); a token out of the caches writes nothing, and zeros as its q.
//
// A row is `units` pieces, one per invocation (`lanes` invocations per row, a power of two, the
// ones past `units` idle; a workgroup takes WG / lanes rows). Piece u holds channels a0 = 2u and
// a0 + 1, and with rotate_half also a0 + D/2 and a0 + D/2 + 1: the pairs of frequencies 2u and
// 2u + 1 (rotate_half) or of frequency u (interleaved), so packed f16 words are written whole.
// With rotate_half and D/2 odd, the last piece has no second frequency (`two` false; f32 only).
//   q and k rows: with NORM, the row's inverse RMS (each piece's squares, added over the row's
//     invocations in lane order), each channel scaled by it and by its weight and rounded to the
//     activation dtype, as rms_norm gives it. Then the rotation of rope (rope_sincos,
//     rope_rotate: rope_angles.wgsl) at the token's position. q rows go to QOut (q's layout and
//     dtype); k rows, rounded to the activation dtype, to the token's cache row (slot, h,
//     position) of KCache, converted to the cache's storage.
//   v rows: to the same cache row of VCache, converted as update_cache converts them.
// Nothing else of the caches is written.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "rope_angles.wgsl"
struct Params {
  rows: u32,        // B * S * (Hq + 2 * Hkv)
  q_rows: u32,      // B * S * Hq
  kv_rows: u32,     // B * S * Hkv
  seq: u32,         // S
  hq: u32,
  hkv: u32,
  dim: u32,         // D
  max_seq: u32,     // the caches' MaxS
  pos: u32,         // input_pos
  inv_n: f32,       // 1 / D
  eps: f32,
  norm_base: u32,   // the word of Table where q's norm weight starts (NORM); k's follows it
  norm_words: u32,  // words of one norm weight
  lanes: u32,       // invocations per row: a power of two >= units, <= WG
  units: u32,       // pieces per row: ceil(D / 2 / FREQS)
  slots: u32,       // the caches' slots (B; S of rope_update_cache_rows)
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Q: array<u32>;
@group(0) @binding(2) var<storage, read> K: array<u32>;
@group(0) @binding(3) var<storage, read> V: array<u32>;
// Per frequency f: turns per position at words 2f (high) and 2f + 1 (low); then, with NORM, the
// q and k norm weights in the activation storage.
@group(0) @binding(4) var<storage, read> Table: array<u32>;
@group(0) @binding(5) var<storage, read_write> QOut: array<u32>;
@group(0) @binding(6) var<storage, read_write> KCache: array<u32>;
@group(0) @binding(7) var<storage, read_write> VCache: array<u32>;
// rope_update_cache_rows only (token_rows): i32 [S, 2], each token's (slot, position).
@group(0) @binding(8) var<storage, read> Rows: array<u32>;

const WG = 256u;  // kWorkgroupSize on the host
const ROTATE_HALF = {{rotate_half}};  // pairs (f, f + D/2), two frequencies a piece; else (2f, 2f + 1)
const IO_F16 = {{io_f16}};            // q, k, v, QOut and the norm weights: packed f16, else f32
const CACHE_F16 = {{cache_f16}};      // the caches: packed f16, else f32
const NORM = {{norm}};

// Only the NORM variants call row_inv_rms (the variant parameter inv_rms): a kernel without the
// workgroup array and barriers runs much faster on SwiftShader.
var<workgroup> red: array<f32, WG>;

// The inverse RMS of the row: `sq` (this piece's sum of squares) added over the row's lanes, in
// lane order by every lane alike (one barrier; the same sum, so the same scale, on every lane).
fn row_inv_rms(lid: u32, lane: u32, lanes: u32, sq: f32) -> f32 {
  red[lid] = sq;
  workgroupBarrier();
  let base = lid - lane;
  var sum = 0.0;
  for (var j = 0u; j < lanes; j++) { sum += red[base + j]; }
  return inverseSqrt(sum * params.inv_n + params.eps);
}

fn unpack(w: u32, i: u32, f16: bool) -> f32 {
  if (f16) { return unpack2x16float(w)[i & 1u]; }
  return bitcast<f32>(w);
}

// Element i of q (kind 0), k (kind 1) or v (kind 2).
fn load(kind: u32, i: u32) -> f32 {
  let w = select(i, i >> 1u, IO_F16);
  var word = 0u;
  if (kind == 0u) {
    word = Q[w];
  } else if (kind == 1u) {
    word = K[w];
  } else {
    word = V[w];
  }
  return unpack(word, i, IO_F16);
}

// x as the activation dtype holds it.
fn to_io(x: f32) -> f32 {
  if (IO_F16) { return unpack2x16float(f16_bits(x)).x; }
  return x;
}

// Channel c's value x of a q (kind 0) or k (kind 1) row with inverse RMS inv_rms, normalized.
fn normalized(kind: u32, c: u32, x: f32, inv_rms: f32) -> f32 {
  let i = params.norm_base + kind * params.norm_words + select(c, c >> 1u, IO_F16);
  return to_io(x * inv_rms * unpack(Table[i], c, IO_F16));
}

fn turns(f: u32) -> vec2<u32> { return vec2<u32>(Table[2u * f], Table[2u * f + 1u]); }

// Where token s of batch b goes: (slot, position, 1), or z = 0 where it is out of the caches.
// token_step: slot b at input_pos + s (the host checked the range). token_rows: Rows[s], in the
// caches when slot < slots and position < max_seq (a negative i32 is a large u32).
fn token_step(b: u32, s: u32) -> vec3<u32> { return vec3<u32>(b, params.pos + s, 1u); }
fn token_rows(b: u32, s: u32) -> vec3<u32> {
  let slot = Rows[2u * s];
  let pos = Rows[2u * s + 1u];
  return select(vec3<u32>(0u), vec3<u32>(slot, pos, 1u), slot < params.slots && pos < params.max_seq);
}

// Writes v.x at element e of QOut (kind 0), KCache (kind 1) or VCache (kind 2), and v.y at e + 1
// when `two`. A packed f16 target always gets a whole word (e even, two set: the host's guard).
fn put(kind: u32, e: u32, v: vec2<f32>, two: bool) {
  if (kind == 0u) {
    if (IO_F16) {
      QOut[e >> 1u] = f16_word(v);
    } else {
      QOut[e] = bitcast<u32>(v.x);
      if (two) { QOut[e + 1u] = bitcast<u32>(v.y); }
    }
    return;
  }
  let w = vec2<f32>(to_io(v.x), to_io(v.y));
  if (CACHE_F16) {
    if (kind == 1u) {
      KCache[e >> 1u] = f16_word(w);
    } else {
      VCache[e >> 1u] = f16_word(w);
    }
  } else if (kind == 1u) {
    KCache[e] = bitcast<u32>(w.x);
    if (two) { KCache[e + 1u] = bitcast<u32>(w.y); }
  } else {
    VCache[e] = bitcast<u32>(w.x);
    if (two) { VCache[e + 1u] = bitcast<u32>(w.y); }
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let lanes = params.lanes;
  let first = wgx_workgroup_index(wid, nwg) * (WG / lanes);
  if (first >= params.rows) { return; }
  let lane = lid & (lanes - 1u);
  let row = first + lid / lanes;

  // Which tensor the row belongs to (3: past the last row), and its (b, s, h).
  var kind = 3u;
  var r = 0u;
  var heads = params.hkv;
  if (row < params.q_rows) {
    kind = 0u;
    r = row;
    heads = params.hq;
  } else if (row < params.q_rows + params.kv_rows) {
    kind = 1u;
    r = row - params.q_rows;
  } else if (row < params.rows) {
    kind = 2u;
    r = row - params.q_rows - params.kv_rows;
  }
  let h = r % heads;
  let bs = r / heads;
  let dim = params.dim;
  let half = dim / 2u;
  let src = r * dim;

  // This piece's channels (x, y at a0, a0 + 1; z, w at a0 + half, a0 + half + 1), 0 where absent.
  let live = kind < 3u && lane < params.units;
  let a0 = 2u * lane;
  let two = !ROTATE_HALF || a0 + 1u < half;
  var x = vec4<f32>(0.0, 0.0, 0.0, 0.0);
  if (live) {
    x.x = load(kind, src + a0);
    if (two) { x.y = load(kind, src + a0 + 1u); }
    if (ROTATE_HALF) {
      x.z = load(kind, src + a0 + half);
      if (two) { x.w = load(kind, src + a0 + half + 1u); }
    }
  }

  let inv_rms = {{inv_rms}};
  if (!live) { return; }

  let at = {{token}}(bs / params.seq, bs % params.seq);
  if (at.z == 0u) {
    if (kind != 0u) { return; }
    x = vec4<f32>(0.0, 0.0, 0.0, 0.0);
  } else if (kind < 2u) {
    if (NORM) {
      x.x = normalized(kind, a0, x.x, inv_rms);
      x.y = normalized(kind, a0 + 1u, x.y, inv_rms);
      if (ROTATE_HALF) {
        x.z = normalized(kind, a0 + half, x.z, inv_rms);
        x.w = normalized(kind, a0 + half + 1u, x.w, inv_rms);
      }
    }
    let pos = at.y;
    if (ROTATE_HALF) {
      let r0 = rope_rotate(x.x, x.z, rope_sincos(pos, turns(a0)));
      var r1 = vec2<f32>(0.0, 0.0);
      if (two) { r1 = rope_rotate(x.y, x.w, rope_sincos(pos, turns(a0 + 1u))); }
      x = vec4<f32>(r0.x, r1.x, r0.y, r1.y);
    } else {
      let r0 = rope_rotate(x.x, x.y, rope_sincos(pos, turns(lane)));
      x = vec4<f32>(r0.x, r0.y, 0.0, 0.0);
    }
  }

  // q keeps its layout; k and v go to cache row (slot, h, position).
  let out = select(((at.x * params.hkv + h) * params.max_seq + at.y) * dim, src, kind == 0u);
  put(kind, out + a0, x.xy, two);
  if (ROTATE_HALF) { put(kind, out + a0 + half, x.zw, two); }
}
