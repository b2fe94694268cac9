wgx_shader_family(wgx_ops FAMILY unary VARIANTS ${CMAKE_CURRENT_LIST_DIR}/unary.variants.toml ${CMAKE_CURRENT_LIST_DIR}/where.variants.toml)
