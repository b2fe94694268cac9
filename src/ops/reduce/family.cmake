wgx_shader_family(wgx_ops FAMILY reduce VARIANTS
  ${CMAKE_CURRENT_LIST_DIR}/reduce.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/rownorm.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/softmax_cols.variants.toml)
