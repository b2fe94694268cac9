// Hugging Face config.json (and generation_config.json) -> ModelConfig, for LlamaForCausalLM
// (Llama 3.x) and Qwen3ForCausalLM. Sizes are required; fields Hugging Face gives a class default
// (num_key_value_heads, head_dim, tie_word_embeddings, rope scaling) take that default when absent.
// Both the classic layout (rope_theta, rope_scaling) and transformers 5's rope_parameters are read.
// Anything wgx cannot run as described (another architecture, biases, sliding windows, a rope
// scaling other than llama3) is refused with a ModelError naming the file and the field.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "models/model.h"

namespace wgx::models {

// config.json, plus generation_config.json when the folder has one.
ModelConfig load_config(const std::filesystem::path& dir);

// The same from text; `source` names the file in errors.
ModelConfig parse_config(std::string_view config_json, const std::string& source);
// Adds generation_config.json's eos ids (after config.json's, without repeats) and its bos id
// where config.json has none.
void apply_generation_config(ModelConfig& config, std::string_view generation_json, const std::string& source);

const char* architecture_name(Architecture arch);  // "LlamaForCausalLM", "Qwen3ForCausalLM"

}  // namespace wgx::models
