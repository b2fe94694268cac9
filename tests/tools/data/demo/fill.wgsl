// Sets every element to {{value}}. Escaping check: "quotes", back\slash, tab	here, π, ??=.
@group(0) @binding(0) var<storage, read_write> out: array<{{dtype}}>;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x < arrayLength(&out)) {
    out[gid.x] = {{dtype}}({{value}});
  }
}
