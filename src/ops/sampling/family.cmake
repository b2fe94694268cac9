wgx_shader_family(wgx_ops FAMILY sampling VARIANTS ${CMAKE_CURRENT_LIST_DIR}/sample_token.variants.toml)
