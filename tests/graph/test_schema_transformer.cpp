// Inference of the transformer schemas (rope, swiglu, add_rms_norm, linear_qkv,
// add_rms_norm_linear_qkv/_swiglu, update_cache, rope_update_cache, sdpa_with_kv_cache), good and bad, at Llama/Qwen-like and prime sizes.
#include "schema_cases.h"

namespace wgx::graph::testing {

const std::vector<SchemaCase>& transformer_cases() {
  const Dim S = kSeq;
  const Value pos = sym_value(kPos);
  using I = std::vector<int64_t>;
  static const std::vector<SchemaCase> cases = {
      {"rope", "rope", {f32({1, S, 32, 64}), pos}, {}, "f32[1, seq_len, 32, 64]"},
      {"rope_llama3", "rope", {f16({1, S, 8, 128}), scalar_i(5)}, {{"scaling", "llama3"}, {"theta", 500000.0}},
       "f16[1, seq_len, 8, 128]"},
      {"rope_odd_head_dim", "rope", {f32({1, S, 2, 37}), pos}, {}, "!head_dim must be a constant even size"},
      {"rope_layout", "rope", {f32({1, S, 2, 64}), pos}, {{"layout", "sideways"}}, "!layout is \"sideways\""},
      {"rope_rank", "rope", {f32({S, 64}), pos}, {}, "!rank 2"},
      {"swiglu", "swiglu", {f32({1, S, 113}), f32({1, S, 113})}, {}, "f32[1, seq_len, 113]"},
      {"swiglu_shapes", "swiglu", {f32({1, S, 113}), f32({1, S, 37})}, {}, "!differ"},
      {"add_rms_norm", "add_rms_norm", {f32({1, S, 37}), f32({1, S, 37}), f32({37})}, {},
       "f32[1, seq_len, 37], f32[1, seq_len, 37]"},
      {"add_rms_norm_weight", "add_rms_norm", {f32({1, S, 37}), f32({1, S, 37}), f32({11})}, {},
       "!weight does not match"},
      {"linear_qkv", "linear_qkv", {f32({1, S, 64}), f32({96, 64})}, {{"splits", I{64, 16, 16}}},
       "f32[1, seq_len, 64], f32[1, seq_len, 16], f32[1, seq_len, 16]"},
      {"linear_qkv_q4", "linear_qkv", {f32({1, S, 64}), q4({96, 64}, 32)}, {{"splits", I{64, 16, 16}}},
       "f32[1, seq_len, 64], f32[1, seq_len, 16], f32[1, seq_len, 16]"},
      {"linear_qkv_splits", "linear_qkv", {f32({1, S, 64}), f32({96, 64})}, {{"splits", I{64, 16, 17}}},
       "!splits add up to 97"},
      {"add_rms_norm_linear_qkv", "add_rms_norm_linear_qkv", {f32({1, S, 64}), f32({1, S, 64}), f32({64}), q4({96, 64}, 32)},
       {{"splits", I{64, 16, 16}}, {"eps", 1e-5}},
       "f32[1, seq_len, 64], f32[1, seq_len, 16], f32[1, seq_len, 16], f32[1, seq_len, 64]"},
      {"add_rms_norm_linear_qkv_bias", "add_rms_norm_linear_qkv",
       {f16({3, 37}), f16({3, 37}), f16({37}), f16({11, 37}), f16({11})}, {{"splits", I{5, 3, 3}}},
       "f16[3, 5], f16[3, 3], f16[3, 3], f16[3, 37]"},
      {"add_rms_norm_linear_qkv_residual", "add_rms_norm_linear_qkv",
       {f32({1, S, 64}), f32({1, S, 32}), f32({64}), q4({96, 64}, 32)}, {{"splits", I{64, 16, 16}}},
       "!x and residual have different shapes"},
      {"add_rms_norm_linear_qkv_norm", "add_rms_norm_linear_qkv",
       {f32({1, S, 64}), f32({1, S, 64}), f32({32}), q4({96, 64}, 32)}, {{"splits", I{64, 16, 16}}},
       "!norm_weight does not match"},
      {"add_rms_norm_linear_qkv_splits", "add_rms_norm_linear_qkv",
       {f32({1, S, 64}), f32({1, S, 64}), f32({64}), q4({96, 64}, 32)}, {{"splits", I{64, 16, 17}}},
       "!splits add up to 97"},
      {"add_rms_norm_linear_swiglu", "add_rms_norm_linear_swiglu",
       {f32({1, S, 64}), f32({1, S, 64}), f32({64}), q4({226, 64}, 32)}, {}, "f32[1, seq_len, 113], f32[1, seq_len, 64]"},
      {"add_rms_norm_linear_swiglu_k", "add_rms_norm_linear_swiglu",
       {f32({5, 37}), f32({5, 37}), f32({37}), f32({226, 36})}, {}, "!expects 36"},
      {"add_rms_norm_linear_swiglu_dtype", "add_rms_norm_linear_swiglu",
       {f32({5, 64}), f16({5, 64}), f32({64}), q4({226, 64}, 32)}, {}, "!input 1 is f16 but input 0 is f32"},
      {"update_cache", "update_cache", {f16({1, 8, 2048, 64}), f32({1, S, 8, 64}), pos}, {},
       "f16[1, 8, 2048, 64]"},
      {"update_cache_heads", "update_cache", {f32({1, 8, 2048, 64}), f32({1, S, 4, 64}), pos}, {},
       "!does not fit cache"},
      {"update_cache_too_many", "update_cache", {f32({1, 8, 64, 64}), f32({1, S, 8, 64}), pos}, {},
       "!more new tokens than the cache holds"},
      {"rope_update_cache", "rope_update_cache",
       {f32({1, S, 32, 64}), f32({1, S, 8, 64}), f32({1, S, 8, 64}), f16({1, 8, 2048, 64}), f16({1, 8, 2048, 64}),
        pos},
       {{"scaling", "llama3"}, {"theta", 500000.0}}, "f32[1, seq_len, 32, 64], f16[1, 8, 2048, 64], f16[1, 8, 2048, 64]"},
      {"rope_update_cache_norm", "rope_update_cache",
       {f16({1, S, 16, 128}), f16({1, S, 8, 128}), f16({1, S, 8, 128}), f32({1, 8, 2048, 128}), f32({1, 8, 2048, 128}),
        scalar_i(3), f16({128}), f16({128})},
       {{"eps", 1e-6}}, "f16[1, seq_len, 16, 128], f32[1, 8, 2048, 128], f32[1, 8, 2048, 128]"},
      {"rope_update_cache_one_norm", "rope_update_cache",
       {f32({1, S, 16, 128}), f32({1, S, 8, 128}), f32({1, S, 8, 128}), f32({1, 8, 2048, 128}), f32({1, 8, 2048, 128}),
        pos, f32({128})},
       {}, "!q_norm_weight and k_norm_weight come together"},
      {"rope_update_cache_norm_size", "rope_update_cache",
       {f32({1, S, 16, 128}), f32({1, S, 8, 128}), f32({1, S, 8, 128}), f32({1, 8, 2048, 128}), f32({1, 8, 2048, 128}),
        pos, f32({128}), f32({64})},
       {}, "!input 7 does not match head_dim"},
      {"rope_update_cache_kv", "rope_update_cache",
       {f32({1, S, 16, 64}), f32({1, S, 8, 64}), f32({1, S, 4, 64}), f32({1, 8, 2048, 64}), f32({1, 8, 2048, 64}), pos},
       {}, "!k and v have different shapes"},
      {"rope_update_cache_caches", "rope_update_cache",
       {f32({1, S, 16, 64}), f32({1, S, 8, 64}), f32({1, S, 8, 64}), f32({1, 8, 2048, 64}), f16({1, 8, 2048, 64}), pos},
       {}, "!k_cache and v_cache differ"},
      {"rope_update_cache_fit", "rope_update_cache",
       {f32({1, S, 16, 64}), f32({1, S, 8, 64}), f32({1, S, 8, 64}), f32({1, 4, 2048, 64}), f32({1, 4, 2048, 64}), pos},
       {}, "!does not fit cache"},
      {"rope_update_cache_layout", "rope_update_cache",
       {f32({1, S, 16, 64}), f32({1, S, 8, 64}), f32({1, S, 8, 64}), f32({1, 8, 2048, 64}), f32({1, 8, 2048, 64}), pos},
       {{"layout", "sideways"}}, "!layout is \"sideways\""},
      {"rope_update_cache_dtypes", "rope_update_cache",
       {f32({1, S, 16, 64}), f16({1, S, 8, 64}), f32({1, S, 8, 64}), f32({1, 8, 2048, 64}), f32({1, 8, 2048, 64}), pos},
       {}, "!input 1 is f16 but input 0 is f32"},
      {"sdpa", "sdpa_with_kv_cache", {f32({1, S, 32, 64}), f16({1, 8, 2048, 64}), f16({1, 8, 2048, 64}), pos},
       {}, "f32[1, seq_len, 32, 64]"},
      {"sdpa_gqa", "sdpa_with_kv_cache", {f32({1, S, 12, 64}), f32({1, 8, 2048, 64}), f32({1, 8, 2048, 64}), pos},
       {}, "!constant multiple"},
      {"sdpa_caches", "sdpa_with_kv_cache", {f32({1, S, 32, 64}), f32({1, 8, 2048, 64}), f16({1, 8, 2048, 64}), pos},
       {}, "!k_cache and v_cache differ"},
  };
  return cases;
}

namespace {
class TransformerSchema : public ::testing::TestWithParam<SchemaCase> {};
TEST_P(TransformerSchema, Infers) { check_case(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Graph, TransformerSchema, ::testing::ValuesIn(transformer_cases()), case_name);
}  // namespace

}  // namespace wgx::graph::testing
