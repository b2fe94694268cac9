// Rotary-embedding angles, shared by every kernel that applies rope (this family's rope, the
// attention family's rope_update_cache and sdpa_flash): the frequency table a node's rope
// attributes give. The WGSL that turns a position and a table entry into a rotation is
// src/shaders/lib/rope_angles.wgsl.
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

// The frequency table of a node with rope's attributes (theta, scaling, factor, low_freq_factor,
// high_freq_factor, original_max_position) for head_dim `dim`: per frequency i < dim / 2,
// inv_freq[i] / 2pi as a 64-bit fraction, high word first (2 words per frequency). inv_freq[i] =
// theta^(-2i/dim); with scaling "llama3", Llama 3.1's rule: long wavelengths divided by `factor`,
// short ones kept, a smooth blend between. Computed in double.
std::vector<uint32_t> rope_turns(const runtime::NodeContext& ctx, int64_t dim);

}  // namespace wgx::ops::transformer
