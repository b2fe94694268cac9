// A converted model in one .wgx file: the decoder graph with its weights already in their GPU
// format (q4/f16/f32), and in the metadata table everything else a generating command needs, so
// the Hugging Face folder is no longer required. Loading maps the file: weights are not read,
// converted or copied on the host until the runtime uploads them.
//
//   models::write_model_wgx("demo.wgx", models::load_hf("models/demo", o), o, {json, config});
//   models::WgxModel m = models::load_wgx("demo.wgx");   // m.model is a BuiltModel
//
// Model metadata (every value is a string; numbers in decimal, reals in their shortest
// round-trip form, e.g. "1e-05"). All keys are required unless marked optional:
//
//   wgx.model_metadata            "1", the version of this key set (others are refused)
//   wgx.arch                      llama | qwen3
//   wgx.vocab_size                ModelConfig's sizes, one key per field
//   wgx.hidden_size
//   wgx.intermediate_size
//   wgx.num_layers
//   wgx.num_heads
//   wgx.num_kv_heads
//   wgx.head_dim
//   wgx.rms_norm_eps
//   wgx.rope_theta
//   wgx.rope_scaling              none | llama3; with llama3 also the four below
//   wgx.rope_scaling.factor
//   wgx.rope_scaling.low_freq_factor
//   wgx.rope_scaling.high_freq_factor
//   wgx.rope_scaling.original_max_position
//   wgx.tie_word_embeddings       true | false
//   wgx.max_position_embeddings
//   wgx.bos_token_id              an id, or none
//   wgx.eos_token_ids             comma list, "128001,128008,128009"; empty for none
//   wgx.weights                   q4 | f16 | f32          the load options the graph was built with
//   wgx.kv                        f16 | f32               (KV cache)
//   wgx.max_seq                   context rows of the KV cache (--ctx after clamping to
//                                 max_position_embeddings); must match the graph's input_pos
//   wgx.max_prefill               the most tokens one step feeds; must match the graph's seq
//   wgx.tokenizer.json            the text of tokenizer.json
//   wgx.tokenizer_config.json     optional: the text of tokenizer_config.json (special tokens)
#pragma once

#include <filesystem>
#include <span>
#include <optional>
#include <string>

#include "format/wgx_file.h"
#include "models/model.h"

namespace wgx::models {

// The tokenizer files of a model folder, as text.
struct TokenizerTexts {
  std::string tokenizer_json;
  std::optional<std::string> tokenizer_config_json;
};

struct WgxModel {
  // The mapping model.weights borrows from: keep it while they are in use (a Program copies the
  // weights to the GPU when it is built, so after that only a kept BuiltModel needs it).
  format::WgxFile file;
  BuiltModel model;
  LoadOptions options;  // weights, half_kv_cache, max_seq and max_prefill, as converted

  const std::string& tokenizer_json() const;
  const std::string* tokenizer_config_json() const;  // null when the folder had none
};

// The metadata above for `model`, built with `options`.
format::Metadata model_metadata(const BuiltModel& model, const LoadOptions& options, const TokenizerTexts& tokenizer);

// Writes `model` and its metadata to `path` (atomically, through format::write_wgx).
void write_model_wgx(const std::filesystem::path& path, const BuiltModel& model, const LoadOptions& options,
                     const TokenizerTexts& tokenizer);

// Maps `path` and rebuilds the model. Throws format::FormatError for a damaged file and
// ModelError naming the file and the metadata key for a missing or bad key.
WgxModel load_wgx(const std::filesystem::path& path);
// The same from a file's header and graph section alone (format::parse_wgx_head), for a file that
// arrives as a stream: model.weights is empty, the weights come later. `name` names the file in
// messages.
WgxModel load_wgx_head(std::span<const uint8_t> head, const std::string& name);

}  // namespace wgx::models
