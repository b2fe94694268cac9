// Whisper (WhisperForConditionalGeneration) from a Hugging Face folder: config.json for the
// geometry, generation_config.json for how decoding starts and what it suppresses (the special
// tokens' ids: language, task, timestamps), preprocessor_config.json for the log-mel features.
// Every size is checked; anything wgx cannot run as described (another activation, a mel count
// the features do not make) is a ModelError naming the file and the field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wgx::models {

struct WhisperConfig {
  int64_t vocab_size = 0;
  int64_t num_mel_bins = 80;
  int64_t d_model = 0;
  int64_t encoder_layers = 0, encoder_heads = 0, encoder_ffn = 0;
  int64_t decoder_layers = 0, decoder_heads = 0, decoder_ffn = 0;
  int64_t max_source_positions = 1500;  // encoder positions: 3000 feature frames after the stride-2 stem
  int64_t max_target_positions = 448;   // decoder positions (tokens of one window)
  bool scale_embedding = false;         // token embeddings times sqrt(d_model)

  // generation_config.json (config.json's own ids where it has none).
  int32_t decoder_start_token_id = 0;  // <|startoftranscript|>
  int32_t eos_token_id = 0;            // <|endoftext|>
  std::vector<int32_t> suppress_tokens;        // never picked
  std::vector<int32_t> begin_suppress_tokens;  // not picked as a window's first token
  std::map<std::string, int32_t> languages;    // "en" -> the id of <|en|>; empty for English-only models
  std::optional<int32_t> transcribe_token, translate_token;
  std::optional<int32_t> no_timestamps_token;  // timestamps are the ids after it: <|0.00|>, <|0.02|>, ...
  std::optional<int32_t> prev_sot_token;       // <|startofprev|>: the previous window's text as a prompt
  int64_t max_initial_timestamp_index = 50;    // the first timestamp is at most 1.00 s

  // preprocessor_config.json
  int64_t n_fft = 400, hop_length = 160, sampling_rate = 16000, chunk_length = 30;

  int64_t head_dim() const { return d_model / decoder_heads; }
  bool multilingual() const { return !languages.empty(); }
  // The first timestamp token (<|0.00|>), when the model has them.
  std::optional<int32_t> timestamp_begin() const {
    return no_timestamps_token ? std::optional<int32_t>(*no_timestamps_token + 1) : std::nullopt;
  }
};

// Whether `dir`'s config.json names WhisperForConditionalGeneration (or model_type "whisper").
bool is_whisper_folder(const std::filesystem::path& dir);

WhisperConfig load_whisper_config(const std::filesystem::path& dir);
// From the files' text; `source`s name them in errors. Empty generation/preprocessor text: absent.
WhisperConfig parse_whisper_config(std::string_view config_json, const std::string& config_source,
                                   std::string_view generation_json = {}, const std::string& generation_source = {},
                                   std::string_view preprocessor_json = {}, const std::string& preprocessor_source = {});

}  // namespace wgx::models
