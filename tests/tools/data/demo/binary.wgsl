// out[i] = {{expr}} for a = lhs[i], b = rhs[i]; each invocation handles one {{vec}}.
#include "demo_index.wgsl"
@group(0) @binding(0) var<storage, read> lhs: array<{{vec}}>;
@group(0) @binding(1) var<storage, read> rhs: array<{{vec}}>;
@group(0) @binding(2) var<storage, read_write> out: array<{{vec}}>;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = demo_index(gid);
  if (i >= arrayLength(&out)) {
    return;
  }
  let a = lhs[i];
  let b = rhs[i];
  out[i] = {{expr}};
}
