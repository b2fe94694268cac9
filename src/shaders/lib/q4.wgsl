// q4gsw weights: nibbles q (0..15) that stand for (q - 8) * scale, a scale per group of columns
// along K, f32 or two f16 a word (graph::q4gsw_layout). The template defines
// q4_scale_word(j) -> u32: word j of the weight's scales (from its scale_base).
//
// placed_nibbles(h): the 4 nibbles of half-word h, nibble q at place s (0, 4, 8, 12), as
// (q - 8) * 2^s. Masked in place and put under the exponent of 2^23, nibble q is the float
// 2^23 + q * 2^s: one subtraction leaves (q - 8) * 2^s exactly, with no integer-to-float
// conversion (a slow instruction on GPUs); times 2^-s (kPlace) is exact too.
const kMask = vec4<u32>(0xfu, 0xf0u, 0xf00u, 0xf000u);
const kMagic = vec4<u32>(0x4b000000u);
const kOffset = vec4<f32>(8388616.0, 8388736.0, 8390656.0, 8421376.0);  // 2^23 + 8 * 2^s
const kPlace = vec4<f32>(1.0, 0.0625, 0.00390625, 0.000244140625);     // 2^-s
fn placed_nibbles(h: u32) -> vec4<f32> { return bitcast<vec4<f32>>((vec4<u32>(h) & kMask) | kMagic) - kOffset; }

// Scale i of the weight (i = row * groups + group); `f16`: the scales are f16.
fn q4_scale(i: u32, f16: bool) -> f32 {
  if (f16) { return unpack2x16float(q4_scale_word(i >> 1u))[i & 1u]; }
  return bitcast<f32>(q4_scale_word(i));
}
