// out = f(x) elementwise, and dtype conversions (to_copy). One invocation writes one 32-bit word of
// the output ({{per_word}} elements), so packed f16 and byte outputs never race; the input is read
// per element in its own storage, whatever the output's packing.
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
struct Params {
  numel: u32,
  lo: u32,     // clamp bounds: bits of the compute type (f32, i32 or u32)
  hi: u32,
  flags: u32,  // bit 0: lo applies; bit 1: hi applies
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> X: array<u32>;
@group(0) @binding(2) var<storage, read_write> Out: array<u32>;

fn load(i: u32) -> {{in_type}} { return {{load}}; }

// NaN and inf bit patterns in private variables: a bitcast of a constant to NaN or inf would be a
// const-expression, which WGSL rejects.
var<private> F32_NAN: u32 = 0x7fc00000u;
var<private> F32_INF: u32 = 0x7f800000u;

// By bits: float compares may be ordered (NaN != NaN false) or assume no NaNs at all.
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }

// WGSL leaves log, sqrt and division outside their domains undefined, and NaN inputs to most
// builtins; these return what PyTorch (IEEE) does there.
fn log_f(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (x == 0.0) { return -bitcast<f32>(F32_INF); }
  if (x < 0.0) { return bitcast<f32>(F32_NAN); }
  return log(x);
}
fn exp_f(x: f32) -> f32 { return select(exp(x), x, is_nan(x)); }  // SwiftShader's exp(NaN) is inf
fn sqrt_f(x: f32) -> f32 {
  if (x < 0.0) { return bitcast<f32>(F32_NAN); }
  return sqrt(x);
}
// |r| with x's sign (odd functions keep -0 and the sign of tiny x).
fn with_sign(r: f32, x: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(r) & 0x7fffffffu) | (bitcast<u32>(x) & 0x80000000u));
}
fn signed_inf(x: f32) -> f32 { return with_sign(bitcast<f32>(F32_INF), x); }
fn rsqrt_f(x: f32) -> f32 {
  if (x == 0.0) { return signed_inf(x); }
  if (x < 0.0) { return bitcast<f32>(F32_NAN); }
  return inverseSqrt(x);
}
fn reciprocal_f(x: f32) -> f32 {
  if (x == 0.0) { return signed_inf(x); }
  return 1.0 / x;
}

// exp of a non-positive argument only, so neither side overflows.
fn sigmoid_f(x: f32) -> f32 {
  let e = exp(-abs(x));
  let s = 1.0 / (1.0 + e);
  return select(e * s, s, x >= 0.0);
}

// WGSL's tanh is only as accurate as sinh/cosh, and some drivers return NaN for large |x|. Here:
// an odd polynomial below 0.7 (Chebyshev fit), 1 - 2/(e^2z + 1) above; tanh(10) is 1 in f32.
// Max abs error ~8e-8 evaluated in f32.
fn tanh_f(x: f32) -> f32 {
  let z = min(abs(x), 10.0);
  var r: f32;
  if (z < 0.7) {
    let s = z * z;
    r = z * (0.9999999861 + s * (-0.3333312813 + s * (0.1332837789 + s * (-0.05352391778 +
        s * (0.02001960718 + s * -0.005084393603)))));
  } else {
    r = 1.0 - 2.0 / (exp(2.0 * z) + 1.0);
  }
  return select(with_sign(r, x), x, is_nan(x));
}

// erf (WGSL has none): z * P(z^2) below 0.75, 1 - exp(-z^2) * R(u) above with R fitting
// erfc(z) * exp(z^2) on [0.75, 4] in u = (2z - 4.75) / 3.25 (Chebyshev fits). erf(4) is 1 in f32.
// Max abs error 1.1e-7 evaluated in f32 (1.5e-8 for the approximation itself).
fn erf_f(x: f32) -> f32 {
  let z = min(abs(x), 4.0);
  var r: f32;
  if (z < 0.75) {
    let s = z * z;
    r = z * (1.128379166 + s * (-0.3761261947 + s * (0.1128338654 + s * (-0.02683511457 +
        s * (0.005115332113 + s * -0.0006756479569)))));
  } else {
    let u = (2.0 * z - 4.75) / 3.25;
    let p = 0.2205056922 + u * (-0.1315877636 + u * (0.07442601609 + u * (-0.04015939399 +
        u * (0.02077514607 + u * (-0.01033014208 + u * (0.004970308558 + u * (-0.002370678104 +
        u * (0.001068585362 + u * (-0.0003776544735 + u * (0.0001654962061 + u * (-0.0001434576944 +
        u * 0.00005730702519)))))))))));
    r = 1.0 - exp(-(z * z)) * p;
  }
  return with_sign(r, x);
}

fn gelu_f(x: f32) -> f32 { return 0.5 * x * (1.0 + erf_f(x * 0.70710678118654752)); }
fn gelu_tanh_f(x: f32) -> f32 {
  return 0.5 * x * (1.0 + tanh_f(0.79788456080286536 * (x + 0.044715 * x * x * x)));
}

// sin and cos with accurate range reduction (WGSL bounds the builtins only on [-pi, pi], to 2^-11
// absolute; rotary embeddings go far beyond): k = round(x * 2/pi), r = x - k * pi/2 with pi/2
// split in three parts whose products with k are exact for |k| < 2^13, then polynomials on
// [-pi/4, pi/4] (Chebyshev fits). Max abs error ~9e-8 for |x| < 12000; it grows slowly beyond.
fn sincos_f(x: f32) -> vec2<f32> {
  let k = round(x * 0.63661977236758134);
  let r = ((x - k * 1.5703125) - k * 4.837512969970703125e-4) - k * 7.54978995489188216e-8;
  let s = r * r;
  let sr = r * (0.9999999962 + s * (-0.1666664808 + s * (0.008331899230 + s * -0.0001948664442)));
  let cr = 0.9999999999 + s * (-0.4999999953 + s * (0.04166660859 + s * (-0.001388637900 +
           s * 0.00002435825131)));
  switch (i32(k) & 3) {
    case 0: { return vec2<f32>(sr, cr); }
    case 1: { return vec2<f32>(cr, -sr); }
    case 2: { return vec2<f32>(-sr, -cr); }
    default: { return vec2<f32>(-cr, sr); }
  }
}

fn clamp_f(x: f32) -> f32 {
  var y = x;
  if ((params.flags & 1u) != 0u) { y = max(y, bitcast<f32>(params.lo)); }
  if ((params.flags & 2u) != 0u) { y = min(y, bitcast<f32>(params.hi)); }
  return select(y, x, is_nan(x));  // NaN stays NaN, as in PyTorch
}
fn clamp_i(x: i32) -> i32 {
  var y = x;
  if ((params.flags & 1u) != 0u) { y = max(y, bitcast<i32>(params.lo)); }
  if ((params.flags & 2u) != 0u) { y = min(y, bitcast<i32>(params.hi)); }
  return y;
}
fn clamp_u(x: u32) -> u32 {
  var y = x;
  if ((params.flags & 1u) != 0u) { y = max(y, params.lo); }
  if ((params.flags & 2u) != 0u) { y = min(y, params.hi); }
  return y;
}

// The f16 stores call f16_bits (f16_pack.wgsl: f32 -> f16 bits, overflow to +-inf, NaN kept).

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = wgx_workgroup_index(wid, nwg) * {{workgroup_size}}u + lid;
  let first = word * {{per_word}}u;
  if (first >= params.numel) { return; }
  var vals: array<{{out_type}}, 4>;  // zero-initialized: the tail of the last word stays 0
  for (var k = 0u; k < {{per_word}}u; k++) {
    let i = first + k;
    if (i >= params.numel) { break; }
    let a = load(i);
    vals[k] = {{expr}};
  }
  Out[word] = {{store}};
}
