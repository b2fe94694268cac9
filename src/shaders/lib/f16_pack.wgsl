// f32 -> f16 for kernels that write packed f16: f16_bits(x) is x's half (rounded as
// pack2x16float rounds), f16_word(v) packs v.x (low) and v.y into one word. pack2x16float is
// undefined outside the finite f16 range, so overflow saturates to +-inf (as rounding does) and
// NaN stays NaN, as a PyTorch cast gives them.
fn f16_bits(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) { return 0x7e00u; }
  if (abs(x) >= 65520.0) { return ((b >> 16u) & 0x8000u) | 0x7c00u; }
  return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;
}
fn f16_word(v: vec2<f32>) -> u32 { return f16_bits(v.x) | (f16_bits(v.y) << 16u); }
