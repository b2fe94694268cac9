wgx_shader_family(wgx_ops FAMILY layout VARIANTS ${CMAKE_CURRENT_LIST_DIR}/gather.variants.toml ${CMAKE_CURRENT_LIST_DIR}/cat.variants.toml)
