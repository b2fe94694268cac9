// Fuzzes config.json parsing, models::parse_config, and generation_config.json on top of it
// (models::apply_generation_config).
//
// The input is config.json's text, optionally followed by a NUL byte and generation_config.json's
// (JSON text holds no NUL byte). The parser must reject what it cannot run with a ModelError; a
// config it accepts must describe a model the decoder builder can take (sizes in range, heads that
// divide, an even head_dim, finite positive rope settings).
#include <cmath>

#include "fuzz_util.h"
#include "models/config.h"
#include "models/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wgx;
  const std::vector<std::string_view> parts = fuzz::split(fuzz::as_text({data, size}), '\0', 2);
  models::ModelConfig c;
  try {
    c = models::parse_config(parts[0], "config.json");
  } catch (const models::ModelError&) {
    return 0;
  }
  fuzz::check(c.vocab_size > 0 && c.hidden_size > 0 && c.intermediate_size > 0 && c.num_layers > 0,
              "a size is not positive");
  fuzz::check(c.num_heads > 0 && c.num_kv_heads > 0 && c.num_heads % c.num_kv_heads == 0,
              "the kv heads do not divide the heads");
  fuzz::check(c.head_dim > 0 && c.head_dim % 2 == 0, "head_dim is not positive and even");
  fuzz::check(std::isfinite(c.rope_theta) && c.rope_theta > 0, "rope_theta is not finite and positive");
  fuzz::check(std::isfinite(c.rms_norm_eps) && c.rms_norm_eps >= 0, "rms_norm_eps is not finite and >= 0");
  fuzz::check(c.max_position_embeddings > 0, "max_position_embeddings is not positive");
  if (c.rope_scaling) {
    const models::RopeScaling& s = *c.rope_scaling;
    fuzz::check(std::isfinite(s.factor) && s.factor > 0 && s.low_freq_factor > 0 &&
                    s.high_freq_factor > s.low_freq_factor && std::isfinite(s.high_freq_factor) &&
                    s.original_max_position > 0,
                "the llama3 rope scaling is out of range");
  }
  for (int32_t id : c.eos_token_ids) fuzz::check(id >= 0, "a negative eos id");
  fuzz::check(!c.bos_token_id || *c.bos_token_id >= 0, "a negative bos id");
  (void)models::architecture_name(c.architecture);

  if (parts.size() < 2) return 0;
  const size_t eos_before = c.eos_token_ids.size();
  try {
    models::apply_generation_config(c, parts[1], "generation_config.json");
  } catch (const models::ModelError&) {
    return 0;
  }
  fuzz::check(c.eos_token_ids.size() >= eos_before, "generation_config.json dropped eos ids");
  for (int32_t id : c.eos_token_ids) fuzz::check(id >= 0, "a negative eos id");
  return 0;
}
