// Rotary position embedding of x [B, S, H, D], viewed as rows of D channels; row r is token
// s = (r / H) % S at position input_pos + s. Frequency f rotates the channel pair pair(f) by the
// angle position * inv_freq[f]. One invocation takes {{freqs}} adjacent frequencies, so that
// packed f16 outputs are written in whole words.
//
// Angles: an f32 product position * inv_freq is off by up to half an ulp of the angle (0.004 rad
// at 1e5) before any sin/cos error, so it is not formed. The host gives inv_freq / 2pi (turns per
// position) as a 64-bit fixed-point fraction; position * turns mod 1 is then exact integer
// arithmetic, its top 32 bits a fraction of a turn that is reduced exactly (quarter turns are
// its top bits). What remains is the polynomials' error, about 1e-7, at any position.
struct Params {
  units: u32,          // invocations with work: rows * units_per_row
  units_per_row: u32,  // half / {{freqs}}
  half: u32,           // D / 2
  heads: u32,
  seq: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read> Pos: array<u32>;         // input_pos (i32 bits)
@group(0) @binding(3) var<storage, read> Turns: array<vec2<u32>>;  // per frequency: (high, low) words
@group(0) @binding(4) var<storage, read_write> Out: array<u32>;

const WG = {{workgroup_size}}u;
const FREQS = {{freqs}}u;

fn load(i: u32) -> f32 { return {{load}}; }
// The two channels (within a row) that frequency f rotates: (a, b) -> (a cos - b sin, b cos + a sin).
fn pair(f: u32) -> vec2<u32> { return {{pair}}; }

// The high 32 bits of the 64-bit product a * b.
fn mul_hi(a: u32, b: u32) -> u32 {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let m1 = a1 * b0;
  let m2 = a0 * b1;
  let mid = ((a0 * b0) >> 16u) + (m1 & 0xffffu) + (m2 & 0xffffu);
  return a1 * b1 + (m1 >> 16u) + (m2 >> 16u) + (mid >> 16u);
}

// (sin, cos) of t / 2^32 turns: q quarter turns (the nearest) plus r in [-pi/4, pi/4], where
// Taylor polynomials of degree 9 and 10 are within 2e-9 of sin and cos.
fn sincos_turns(t: u32) -> vec2<f32> {
  let q = (t + 0x20000000u) >> 30u;
  let r = f32(bitcast<i32>(t - (q << 30u))) * 1.4629180792671596e-9;  // 2pi / 2^32
  let s = r * r;
  let sn = r * (1.0 + s * (-1.0 / 6.0 + s * (1.0 / 120.0 + s * (-1.0 / 5040.0 + s * (1.0 / 362880.0)))));
  let cs = 1.0 + s * (-0.5 + s * (1.0 / 24.0 + s * (-1.0 / 720.0 + s * (1.0 / 40320.0 + s * (-1.0 / 3628800.0)))));
  switch (q) {
    case 0u: { return vec2<f32>(sn, cs); }
    case 1u: { return vec2<f32>(cs, -sn); }
    case 2u: { return vec2<f32>(-sn, -cs); }
    default: { return vec2<f32>(-cs, sn); }
  }
}

// The rotated values of frequency f's pair in the row starting at element `base`.
fn rotate(base: u32, f: u32, pos: u32) -> vec2<f32> {
  let t = Turns[f];
  let sc = sincos_turns(pos * t.x + mul_hi(pos, t.y));
  let p = pair(f);
  let a = load(base + p.x);
  let b = load(base + p.y);
  return vec2<f32>(a * sc.y - b * sc.x, b * sc.y + a * sc.x);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let u = wgx_workgroup_index(wid, nwg) * WG + lid;
  if (u >= params.units) { return; }
  let row = u / params.units_per_row;
  let f0 = (u - row * params.units_per_row) * FREQS;
  let base = row * 2u * params.half;
  let pos = Pos[0] + (row / params.heads) % params.seq;  // i32 + u32 in two's complement
  var r: array<vec2<f32>, FREQS>;
  for (var k = 0u; k < FREQS; k++) { r[k] = rotate(base, f0 + k, pos); }
  let p = pair(f0);
  {{store}}
}
