wgx_shader_family(wgx_ops FAMILY binary VARIANTS ${CMAKE_CURRENT_LIST_DIR}/binary.variants.toml)
