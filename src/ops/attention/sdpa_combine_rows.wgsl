// sdpa_with_kv_cache, FlashDecoding's combine pass: the merge of sdpa_combine.wgsl,
//   out = sum_c exp(m_c - M) * acc_c / sum_c exp(m_c - M) * l_c   (M the max of the m_c),
// with one workgroup per output row (a query head of a batch row) instead of one invocation per
// output pair. A decode step has only B * Hq rows and, at long context, up to 48 chunks per row:
// one invocation per pair read 2 x 48 partials one after the other on a few hundred invocations.
// Here the chunks' maxes and weights are reduced over the workgroup (the weights kept in workgroup
// memory), and each invocation adds up every G-th chunk of one pair (several independent reads),
// G = WG / params.lanes groups; the G partial sums are then added in workgroup memory. Chunks
// with no visible row (m_c = -1e30, l_c = 0) weigh 0.
struct Params {
  rows: u32,    // output rows: batch * query heads
  half: u32,    // dim / 2: output pairs per row
  chunks: u32,  // chunks now (at most MAX_CHUNKS)
  stride: u32,  // chunk slots per output row in Stats and Acc
  lanes: u32,   // invocations per pair group: a power of two, at least half or WG
  pad0: u32,
  pad1: u32,
  pad2: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> Stats: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> Acc: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> Out: array<u32>;

const OUT_F16: bool = {{out_f16}};  // Out holds packed f16 (else f32)

const WG: u32 = 256u;
const MAX_CHUNKS: u32 = 1024u;
const LOWEST: f32 = -3.0e38;  // below every m_c (-1e30 for an empty chunk)

var<workgroup> w_s: array<f32, MAX_CHUNKS>;  // exp(m_c - M) per chunk
var<workgroup> red: array<f32, WG>;
var<workgroup> part: array<vec2<f32>, WG>;

// The max (is_max) or the sum of red[0 .. WG) into red[0]; every invocation calls it.
fn reduce(is_max: bool, lid: u32) {
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    workgroupBarrier();
    if (lid < s) { red[lid] = select(red[lid] + red[lid + s], max(red[lid], red[lid + s]), is_max); }
  }
  workgroupBarrier();
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = wgx_workgroup_index(wid, nwg);
  if (row >= params.rows) { return; }
  let slot0 = row * params.stride;
  let chunks = params.chunks;
  var m = LOWEST;
  for (var c = lid; c < chunks; c += WG) { m = max(m, Stats[slot0 + c].x); }
  red[lid] = m;
  reduce(true, lid);
  let big = red[0];
  workgroupBarrier();  // red[0] is read before the sum below rewrites it
  var l = 0.0;
  for (var c = lid; c < chunks; c += WG) {
    let st = Stats[slot0 + c];
    let w = exp(st.x - big);
    w_s[c] = w;
    l += w * st.y;
  }
  red[lid] = l;
  reduce(false, lid);  // its barriers also publish w_s
  let total = red[0];
  let half = params.half;
  let lanes = params.lanes;
  let groups = WG / lanes;
  let g = lid / lanes;
  let pl = lid % lanes;
  for (var p0 = 0u; p0 < half; p0 += lanes) {
    let p = p0 + pl;
    var a = vec2<f32>(0.0);
    if (p < half) {
      for (var c = g; c < chunks; c += groups) { a += w_s[c] * Acc[(slot0 + c) * half + p]; }
    }
    part[lid] = a;
    workgroupBarrier();
    if (g == 0u && p < half) {
      var s = a;
      for (var j = 1u; j < groups; j++) { s += part[j * lanes + pl]; }
      write_out2(2u * (row * half + p), s, total);
    }
    workgroupBarrier();  // part is rewritten by the next pairs
  }
}
