// Element n of a product's bias: the template's `Bias: array<u32>`, f32 or packed f16 (`f16`);
// 0 where `on` is false (no bias, or a column past the output).
fn bias_at(n: u32, on: bool, f16: bool) -> f32 {
  if (!on) { return 0.0; }
  if (f16) { return unpack2x16float(Bias[n >> 1u])[n & 1u]; }
  return bitcast<f32>(Bias[n]);
}
