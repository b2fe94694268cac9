// 32 values of x in int8, as the quant family's one-row kernels stage them and q8_chunks.wgsl
// (or add_rms_norm's q8 form) writes them for q4_gemm: q = round(x * 127 / max |x|), clamped to
// [-127, 127], so x ~ q * dx with dx = max |x| / 127 (each value at most dx / 2 off, plus f32
// rounding). Words: lo = (w0, w1, w2, w3), hi = (w4 .. w7); word 2h holds the q of elements 8h,
// 8h + 2, 8h + 4 and 8h + 6, word 2h + 1 the odd ones: the bytes that w & 0x0f0f0f0f and
// (w >> 4) & 0x0f0f0f0f take from the weight word h of the same 32 columns (nibble i is element
// i). sum: of the 32 q (for the nibbles' offset of 8).
struct I8Chunk { lo: vec4<u32>, hi: vec4<u32>, dx: f32, sum: i32 }
fn i8_chunk(v: array<vec4<f32>, 8>) -> I8Chunk {
  var amax = 0.0;
  for (var i = 0u; i < 8u; i++) { let a = abs(v[i]); amax = max(amax, max(max(a.x, a.y), max(a.z, a.w))); }
  let inv = select(0.0, 127.0 / amax, amax > 0.0);
  var w: array<u32, 8>;
  var sum = vec4<i32>();
  for (var h = 0u; h < 4u; h++) {
    let a = vec4<i32>(clamp(round(v[2u * h] * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));       // 8h .. 8h + 3
    let b = vec4<i32>(clamp(round(v[2u * h + 1u] * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));  // 8h + 4 .. 8h + 7
    w[2u * h] = pack4xI8(vec4<i32>(a.x, a.z, b.x, b.z));
    w[2u * h + 1u] = pack4xI8(vec4<i32>(a.y, a.w, b.y, b.w));
    sum += a + b;
  }
  return I8Chunk(vec4<u32>(w[0], w[1], w[2], w[3]), vec4<u32>(w[4], w[5], w[6], w[7]), amax / 127.0,
                 sum.x + sum.y + sum.z + sum.w);
}
