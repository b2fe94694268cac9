// Rotary-embedding angles, shared by every kernel that applies rope (this family's rope, the
// attention family's rope_update_cache): the frequency table a node's rope attributes give, and
// the WGSL that turns a position and a table entry into a rotation.
//
// Angles: an f32 product position * inv_freq is off by up to half an ulp of the angle (0.004 rad
// at 1e5) before any sin/cos error, so it is not formed. The host gives inv_freq / 2pi (turns per
// position) as a 64-bit fixed-point fraction; position * turns mod 1 is then exact integer
// arithmetic, its top 32 bits a fraction of a turn that is reduced exactly (quarter turns are
// its top bits). What remains is the polynomials' error, about 1e-7, at any position.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/op_kernel.h"

namespace wgx::ops::transformer {

// Prepended to the templates that rotate (after kF16PackWgsl):
//   rope_sincos(pos, t)   (sin, cos) of pos * inv_freq, t = the frequency's (high, low) table words
//   rope_rotate(a, b, sc) the pair (a, b) rotated: (a cos - b sin, b cos + a sin)
inline constexpr const char* kRopeAnglesWgsl = R"(
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
)";

// The frequency table of a node with rope's attributes (theta, scaling, factor, low_freq_factor,
// high_freq_factor, original_max_position) for head_dim `dim`: per frequency i < dim / 2,
// inv_freq[i] / 2pi as a 64-bit fraction, high word first (2 words per frequency). inv_freq[i] =
// theta^(-2i/dim); with scaling "llama3", Llama 3.1's rule: long wavelengths divided by `factor`,
// short ones kept, a smooth blend between. Computed in double.
std::vector<uint32_t> rope_turns(const runtime::NodeContext& ctx, int64_t dim);

}  // namespace wgx::ops::transformer
