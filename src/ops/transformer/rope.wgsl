// Rotary position embedding of x [B, S, H, D], viewed as rows of D channels; row r is token
// s = (r / H) % S at position input_pos + s. Frequency f rotates the channel pair pair(f) by the
// angle position * inv_freq[f]. One invocation takes {{freqs}} adjacent frequencies, so that
// packed f16 outputs are written in whole words. Angles come from the frequency table exactly
// (rope_sincos and rope_rotate: rope_angles.wgsl).
#include "workgroup.wgsl"
#include "f16_pack.wgsl"
#include "rope_angles.wgsl"
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

// The rotated values of frequency f's pair in the row starting at element `base`.
fn rotate(base: u32, f: u32, pos: u32) -> vec2<f32> {
  let p = pair(f);
  return rope_rotate(load(base + p.x), load(base + p.y), rope_sincos(pos, Turns[f]));
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
