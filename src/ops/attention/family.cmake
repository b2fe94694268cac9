wgx_shader_family(wgx_ops FAMILY attention VARIANTS
  ${CMAKE_CURRENT_LIST_DIR}/update_cache.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/rope_update_cache.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/sdpa_materialized.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/sdpa_flash.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/sdpa_combine.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/sdpa_k16.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/sdpa_rows.variants.toml)
