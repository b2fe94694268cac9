// y = x @ W^T (+ bias) for few rows of x (decode), W in q4gsw: the weights are read once for up to
// R rows of x. A row of W is K/32 vec4<u32>s, each holding 32 nibbles (one group of 32, or part
// of a larger group). TPC lanes (params.tpc, a power of two) share a pair of neighbouring columns
// n, n+1: lane t takes the vec4s t, t+TPC, ... of both rows, so the lanes of a pair read
// contiguous runs of each row and every x value loaded serves both columns. Each vec4's sum of
// (nibble - 8) * x is taken in f32 and scaled once (a vec4 lies within one group); the TPC
// partial sums are then reduced in workgroup memory (8 KiB). Output columns are split into up to
// three tensors (linear_qkv).
struct Params {
  m: u32,
  n: u32,
  k: u32,
  flags: u32,
  split0: u32,       // columns [0, split0) go to Out0, [split0, split1) to Out1, the rest to Out2
  split1: u32,
  tiles_n: u32,      // column blocks: ceil(N / (2 * WG / TPC))
  tpc: u32,          // lanes per column pair: a power of two, at most 128
  scale_base: u32,   // the first scale's word in S
  group_shift: u32,  // log2(group size)
  groups: u32,       // groups per row: K / group size
  pad: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> W: array<vec4<u32>>;  // the packed nibbles
@group(0) @binding(3) var<storage, read> S: array<u32>;        // the same tensor, for its scales
@group(0) @binding(4) var<storage, read> Bias: array<u32>;
@group(0) @binding(5) var<storage, read_write> Out0: array<u32>;
@group(0) @binding(6) var<storage, read_write> Out1: array<u32>;
@group(0) @binding(7) var<storage, read_write> Out2: array<u32>;

const WG = 256u;
const R = 4u;
const BIAS = 1u;
const SCALE_F16 = 2u;
const OUT_F16 = 4u;  // packed f16 output, written in pairs (every output width is even)

var<workgroup> red: array<array<vec4<f32>, 2>, WG>;

// Elements e..e+7 of x, e a multiple of 8 (rows of x are K long, a multiple of 32).
fn x8(e: u32) -> array<vec4<f32>, 2> {
  {{x8}}
}

fn bias(n: u32) -> f32 {
  if ((params.flags & BIAS) == 0u) { return 0.0; }
  return {{bias_elem}};
}

fn scale(i: u32) -> f32 {
  if ((params.flags & SCALE_F16) != 0u) { return unpack2x16float(S[params.scale_base + (i >> 1u)])[i & 1u]; }
  return bitcast<f32>(S[params.scale_base + i]);
}

// The 8 weights of a packed word without their scale, elements 0-3 and 4-7.
fn nibbles(w: u32) -> array<vec4<f32>, 2> {
  let v = vec4<u32>(w);
  let mask = vec4<u32>(15u);
  return array<vec4<f32>, 2>(vec4<f32>((v >> vec4<u32>(0u, 4u, 8u, 12u)) & mask) - 8.0,
                             vec4<f32>((v >> vec4<u32>(16u, 20u, 24u, 28u)) & mask) - 8.0);
}

fn put(m: u32, n: u32, v: f32) {
  if (n < params.split0) {
    Out0[m * params.split0 + n] = bitcast<u32>(v);
  } else if (n < params.split1) {
    Out1[m * (params.split1 - params.split0) + n - params.split0] = bitcast<u32>(v);
  } else {
    Out2[m * (params.n - params.split1) + n - params.split1] = bitcast<u32>(v);
  }
}

// Columns n (even) and n + 1 of row m, one f16 word.
fn put2(m: u32, n: u32, v: vec2<f32>) {
  let w = pack2x16float(v);
  if (n < params.split0) {
    Out0[(m * params.split0 + n) >> 1u] = w;
  } else if (n < params.split1) {
    Out1[(m * (params.split1 - params.split0) + n - params.split0) >> 1u] = w;
  } else {
    Out2[(m * (params.n - params.split1) + n - params.split1) >> 1u] = w;
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let wg = wgx_workgroup_index(wid, nwg);
  let tpc = params.tpc;
  let m0 = (wg / params.tiles_n) * R;
  if (m0 >= params.m) { return; }
  let rows = min(R, params.m - m0);
  let n = (wg % params.tiles_n) * (2u * WG / tpc) + 2u * (lid / tpc);
  let n1 = min(n + 1u, params.n - 1u);  // a missing second column repeats the first
  let t = lid % tpc;
  let chunks = params.k >> 5u;
  var acc0 = vec4<f32>();  // column n, one sum per row
  var acc1 = vec4<f32>();  // column n + 1
  if (n < params.n) {
    for (var c = t; c < chunks; c += tpc) {
      let q0 = W[n * chunks + c];
      let q1 = W[n1 * chunks + c];
      let g = (c << 5u) >> params.group_shift;
      var d0 = vec4<f32>();  // the group sums of column n, one per row, before the scale
      var d1 = vec4<f32>();
      for (var h = 0u; h < 4u; h++) {
        let a = nibbles(q0[h]);
        let b = nibbles(q1[h]);
        for (var r = 0u; r < R; r++) {
          if (r >= rows) { break; }
          let xv = x8((m0 + r) * params.k + (c << 5u) + 8u * h);
          d0[r] += dot(a[0], xv[0]) + dot(a[1], xv[1]);
          d1[r] += dot(b[0], xv[0]) + dot(b[1], xv[1]);
        }
      }
      acc0 += scale(n * params.groups + g) * d0;
      acc1 += scale(n1 * params.groups + g) * d1;
    }
  }
  red[lid] = array<vec4<f32>, 2>(acc0, acc1);
  for (var s = tpc / 2u; s > 0u; s >>= 1u) {
    workgroupBarrier();
    if (t < s) {
      red[lid][0] += red[lid + s][0];
      red[lid][1] += red[lid + s][1];
    }
  }
  if (t != 0u || n >= params.n) { return; }
  let sums = red[lid];  // written last by this invocation
  for (var r = 0u; r < rows; r++) {
    let v0 = sums[0][r] + bias(n);
    if ((params.flags & OUT_F16) != 0u) {
      put2(m0 + r, n, vec2<f32>(v0, sums[1][r] + bias(n + 1u)));  // N even: n + 1 exists
    } else {
      put(m0 + r, n, v0);
      if (n + 1u < params.n) { put(m0 + r, n + 1u, sums[1][r] + bias(n + 1u)); }
    }
  }
}
