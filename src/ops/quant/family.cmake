wgx_shader_family(wgx_ops FAMILY quant VARIANTS
  ${CMAKE_CURRENT_LIST_DIR}/q4_gemv.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/dense_gemv.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/tiled.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/q4_gemm.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/q4_gemm_reduce.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/q8_chunks.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/q4_embedding.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/split_f16.variants.toml
  ${CMAKE_CURRENT_LIST_DIR}/swiglu_pairs.variants.toml)
