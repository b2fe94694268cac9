// The element an invocation handles (STRIDE: demo_flags.toml, as the C++ test sees it too).
#include "demo_flags.toml"
fn demo_index(gid: vec3<u32>) -> u32 { return gid.x * STRIDE; }
