wgx_shader_family(wgx_ops FAMILY transformer VARIANTS
  ${CMAKE_CURRENT_LIST_DIR}/rope.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/swiglu.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/add_rms_norm.variants.toml)
