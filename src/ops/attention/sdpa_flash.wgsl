// sdpa_with_kv_cache, FlashDecoding (S == 1), pass 1 of 2: the visible cache rows 0 .. input_pos
// are split into chunks; one workgroup per (batch, kv head, chunk) runs an online softmax over its
// chunk for all `group` query heads that share the kv head (so K and V are read once per group)
// and writes partial results: the running max m, the sum l of exp(score - m), and the unnormalized
// accumulator acc = sum exp(score - m) * v. Pass 2 (sdpa_combine.wgsl) merges the chunks.
// Single pass (params.single = 1, at short context): one chunk holds every visible row, and its
// workgroup writes the output acc / l itself with the combine pass's write_out2 (the family's
// prelude), which is what that pass makes of one chunk (its weight exp(m - m) is 1); Stats and Acc
// are left alone and no pass 2 runs.
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
  max_chunks: u32,  // chunk slots per (batch, head) in the scratch buffers
  scale: f32,
  single: u32,      // 1: a single pass (one chunk), writing Out instead of Stats and Acc
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Q: array<u32>;
@group(0) @binding(2) var<storage, read> K: array<u32>;
@group(0) @binding(3) var<storage, read> V: array<u32>;
@group(0) @binding(4) var<storage, read_write> Stats: array<vec2<f32>>;  // (m, l) per slot
@group(0) @binding(5) var<storage, read_write> Acc: array<vec2<f32>>;    // dim / 2 pairs per slot
@group(0) @binding(6) var<storage, read_write> Out: array<u32>;          // [B, 1, Hq, D], like q

const OUT_F16: bool = {{out_f16}};  // Out holds packed f16 (else f32)

const WG: u32 = 64u;
const T: u32 = 64u;  // cache rows scored together
const MAX_G: u32 = 16u;
const MAX_GD: u32 = 1024u;
const NEG: f32 = -1.0e30;  // a masked score: exp(NEG - m) is 0 for any finite m

var<workgroup> q_s: array<vec2<f32>, MAX_GD / 2u>;    // the group's queries, scaled
var<workgroup> acc_s: array<vec2<f32>, MAX_GD / 2u>;  // their accumulators
var<workgroup> p_s: array<f32, MAX_G * T>;            // scores, then probabilities
var<workgroup> m_s: array<f32, MAX_G>;
var<workgroup> l_s: array<f32, MAX_G>;
var<workgroup> alpha_s: array<f32, MAX_G>;            // rescale of the accumulators this tile

fn load_q2(i: u32) -> vec2<f32> { return {{load_q2}}; }
fn load_k2(i: u32) -> vec2<f32> { return {{load_k2}}; }
fn load_v2(i: u32) -> vec2<f32> { return {{load_v2}}; }

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = wgx_workgroup_index(wid, nwg);
  if (wg >= params.batch * params.hkv * params.chunks) { return; }
  let c = wg % params.chunks;
  let bkv = wg / params.chunks;  // b * hkv + kv head
  let G = params.group;
  let half = params.dim / 2u;
  let pairs = G * half;
  let start = c * params.chunk;
  let end = min(start + params.chunk, params.pos + 1u);
  let kb = bkv * params.max_seq * params.dim;
  // q is [B, 1, Hq, D]: the group's heads are G * D consecutive elements.
  let qb = ((bkv / params.hkv) * params.hq + (bkv % params.hkv) * G) * params.dim;

  for (var i = lid; i < pairs; i += WG) {
    q_s[i] = load_q2(qb + 2u * i) * params.scale;
    acc_s[i] = vec2<f32>(0.0);
  }
  for (var g = lid; g < G; g += WG) {
    m_s[g] = NEG;
    l_s[g] = 0.0;
  }
  workgroupBarrier();

  for (var j0 = start; j0 < end; j0 += T) {
    for (var i = lid; i < G * T; i += WG) {
      let g = i / T;
      let j = j0 + i % T;
      var sc = NEG;
      if (j < end) {
        var dot_acc = 0.0;
        for (var p = 0u; p < half; p++) { dot_acc += dot(q_s[g * half + p], load_k2(kb + j * params.dim + 2u * p)); }
        sc = dot_acc;
      }
      p_s[i] = sc;
    }
    workgroupBarrier();
    for (var g = lid; g < G; g += WG) {
      var tile_max = NEG;
      for (var t = 0u; t < T; t++) { tile_max = max(tile_max, p_s[g * T + t]); }
      let m_new = max(m_s[g], tile_max);
      let alpha = exp(m_s[g] - m_new);
      var sum = 0.0;
      for (var t = 0u; t < T; t++) {
        let p = exp(p_s[g * T + t] - m_new);
        p_s[g * T + t] = p;
        sum += p;
      }
      l_s[g] = l_s[g] * alpha + sum;
      m_s[g] = m_new;
      alpha_s[g] = alpha;
    }
    workgroupBarrier();
    let rows = min(T, end - j0);
    for (var i = lid; i < pairs; i += WG) {
      let g = i / half;
      let p = i % half;
      var a = acc_s[i] * alpha_s[g];
      for (var t = 0u; t < rows; t++) { a += p_s[g * T + t] * load_v2(kb + (j0 + t) * params.dim + 2u * p); }
      acc_s[i] = a;
    }
    workgroupBarrier();
  }

  if (params.single != 0u) {
    // out has q's layout: the group's heads are the G * D elements from qb.
    for (var i = lid; i < pairs; i += WG) { write_out2(qb + 2u * i, acc_s[i], l_s[i / half]); }
    return;
  }
  // Slot of (b, query head, chunk); query head = kv head * G + g.
  let slot0 = ((bkv / params.hkv) * params.hq + (bkv % params.hkv) * G) * params.max_chunks + c;
  for (var g = lid; g < G; g += WG) { Stats[slot0 + g * params.max_chunks] = vec2<f32>(m_s[g], l_s[g]); }
  for (var i = lid; i < pairs; i += WG) {
    Acc[(slot0 + (i / half) * params.max_chunks) * half + i % half] = acc_s[i];
  }
}
