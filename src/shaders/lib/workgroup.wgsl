// wgx_workgroup_index: the linear index of this workgroup in a dispatch that gpu::Recorder may
// split over y and z (counts beyond 65,535 workgroups). Every op kernel starts from it.
fn wgx_workgroup_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.x + nwg.x * (wid.y + nwg.y * wid.z);
}
