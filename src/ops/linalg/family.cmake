wgx_shader_family(wgx_ops FAMILY linalg VARIANTS
  ${CMAKE_CURRENT_LIST_DIR}/gemm.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/gemv_nk.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/gemv_kn.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/embedding.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/to_f16.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/conv1d.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/conv1d_im2col.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/conv1d_gemm.variants.toml)
