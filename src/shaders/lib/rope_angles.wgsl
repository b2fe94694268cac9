// Rotary-embedding angles, for every kernel that applies rope (transformer's rope, attention's
// rope_update_cache and sdpa_flash's flash_rope variants); the table comes from
// ops::transformer::rope_turns (src/ops/transformer/rope_angles.h, which says how it is exact).
//   rope_sincos(pos, t)   (sin, cos) of pos * inv_freq, t = the frequency's (high, low) table words
//   rope_rotate(a, b, sc) the pair (a, b) rotated: (a cos - b sin, b cos + a sin)

// The high 32 bits of the 64-bit product a * b.
fn rope_mul_hi(a: u32, b: u32) -> u32 {
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
fn rope_turn_sincos(t: u32) -> vec2<f32> {
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

// (sin, cos) of pos * inv_freq: pos * turns mod 1, exact, as a 32-bit fraction of a turn.
fn rope_sincos(pos: u32, t: vec2<u32>) -> vec2<f32> { return rope_turn_sincos(pos * t.x + rope_mul_hi(pos, t.y)); }

fn rope_rotate(a: f32, b: f32, sc: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(a * sc.y - b * sc.x, b * sc.y + a * sc.x);
}
