// The end of sdpa's softmax, for the templates that finish it: sdpa_combine and sdpa_flash's merge
// (after merging the chunks), sdpa_flash's single pass (one chunk, nothing to merge). Output
// elements i and i + 1 (i even) become acc / l in the output's storage: the template declares
// `Out` (array<u32>) and `const OUT_F16: bool` (packed f16 words, written whole so neighbours
// never race).
#include "f16_pack.wgsl"
fn write_out2(i: u32, acc: vec2<f32>, l: f32) {
  let v = acc / l;
  if (OUT_F16) {
    Out[i >> 1u] = f16_word(v);
  } else {
    Out[i] = bitcast<u32>(v.x);
    Out[i + 1u] = bitcast<u32>(v.y);
  }
}
