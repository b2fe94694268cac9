// silu(x) = x * sigmoid(x), with exp of a non-positive argument only, so nothing overflows.
fn silu(x: f32) -> f32 {
  let e = exp(-abs(x));
  let s = 1.0 / (1.0 + e);
  return x * select(e * s, s, x >= 0.0);
}
