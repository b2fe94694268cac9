#include "models/whisper_config.h"

#include <limits>

#include "models/config_fields.h"
#include "models/error.h"
#include "models/json_excerpt.h"

namespace wgx::models {

namespace {

using nlohmann::json;

constexpr int64_t kMaxSize = int64_t{1} << 31;
constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max();

int32_t token(const Fields& f, std::string_view key) { return static_cast<int32_t>(f.integer(key, 0, kMaxId)); }

std::optional<int32_t> optional_token(const Fields& f, std::string_view key) {
  if (!f.has(key)) return std::nullopt;
  return token(f, key);
}

// {"<|en|>": 50259, ...} -> {"en": 50259, ...}
std::map<std::string, int32_t> language_tokens(const Fields& f) {
  std::map<std::string, int32_t> out;
  const json* map = f.find("lang_to_id");
  if (!map) return out;
  if (!map->is_object()) f.fail("lang_to_id", "is " + json_excerpt(*map) + ", not an object");
  const Fields langs = f.object("lang_to_id");
  for (const auto& [name, id] : map->items()) {
    if (name.size() < 5 || name.substr(0, 2) != "<|" || name.substr(name.size() - 2) != "|>") {
      f.fail("lang_to_id", "has the key " + json_excerpt(json(name)) + ", not a token like \"<|en|>\"");
    }
    out[name.substr(2, name.size() - 4)] = token(langs, name);
  }
  return out;
}

void check_token(const WhisperConfig& c, int32_t id, const std::string& source, const std::string& field) {
  if (id >= c.vocab_size) {
    throw ModelError(source, field, "is " + std::to_string(id) + ", outside the vocabulary of " +
                                        std::to_string(c.vocab_size));
  }
}

}  // namespace

bool is_whisper_folder(const std::filesystem::path& dir) {
  const auto path = dir / "config.json";
  if (!std::filesystem::exists(path)) return false;
  try {
    const json root = parse_json_text(read_text(path), path.string());
    if (!root.is_object()) return false;
    if (root.value("model_type", json()).is_string() && root["model_type"] == "whisper") return true;
    const auto it = root.find("architectures");
    return it != root.end() && it->is_array() && it->size() == 1 && (*it)[0] == "WhisperForConditionalGeneration";
  } catch (const ModelError&) {
    return false;  // the loader that tries it reports the file
  }
}

WhisperConfig parse_whisper_config(std::string_view config_json, const std::string& config_source,
                                   std::string_view generation_json, const std::string& generation_source,
                                   std::string_view preprocessor_json, const std::string& preprocessor_source) {
  const json root = parse_json_text(config_json, config_source);
  const Fields f(root, config_source);
  WhisperConfig c;
  const json* arch = f.find("architectures");
  if (arch && !(arch->is_array() && arch->size() == 1 && (*arch)[0] == "WhisperForConditionalGeneration")) {
    f.fail("architectures", "is " + json_excerpt(*arch) + "; WhisperForConditionalGeneration expected");
  }
  if (f.has("activation_function") && f.string("activation_function") != "gelu") {
    f.fail("activation_function", "is \"" + f.string("activation_function") + "\"; Whisper's gelu is what wgx runs");
  }
  c.vocab_size = f.integer("vocab_size", 1, kMaxSize);
  c.num_mel_bins = f.integer_or("num_mel_bins", 80, 1, 1024);
  c.d_model = f.integer("d_model", 1, 1 << 16);
  c.encoder_layers = f.integer("encoder_layers", 1, 1024);
  c.decoder_layers = f.integer("decoder_layers", 1, 1024);
  c.encoder_heads = f.integer("encoder_attention_heads", 1, 1024);
  c.decoder_heads = f.integer("decoder_attention_heads", 1, 1024);
  c.encoder_ffn = f.integer("encoder_ffn_dim", 1, kMaxSize);
  c.decoder_ffn = f.integer("decoder_ffn_dim", 1, kMaxSize);
  c.max_source_positions = f.integer_or("max_source_positions", 1500, 1, 1 << 20);
  c.max_target_positions = f.integer_or("max_target_positions", 448, 2, 1 << 20);
  c.scale_embedding = f.boolean_or("scale_embedding", false);
  for (auto [heads, key] : {std::pair{c.encoder_heads, "encoder_attention_heads"},
                            std::pair{c.decoder_heads, "decoder_attention_heads"}}) {
    if (c.d_model % heads != 0) {
      f.fail(key, "is " + std::to_string(heads) + ", which does not divide d_model " + std::to_string(c.d_model));
    }
  }
  c.decoder_start_token_id = token(f, "decoder_start_token_id");
  c.eos_token_id = f.token_ids("eos_token_id").empty() ? 0 : f.token_ids("eos_token_id").front();
  if (!f.has("eos_token_id")) f.fail("eos_token_id", "is missing");
  c.suppress_tokens = f.token_ids("suppress_tokens");
  c.begin_suppress_tokens = f.token_ids("begin_suppress_tokens");

  if (!generation_json.empty()) {
    const json gen_root = parse_json_text(generation_json, generation_source);
    const Fields g(gen_root, generation_source);
    if (g.has("decoder_start_token_id")) c.decoder_start_token_id = token(g, "decoder_start_token_id");
    if (g.has("eos_token_id")) c.eos_token_id = g.token_ids("eos_token_id").front();
    if (g.has("suppress_tokens")) c.suppress_tokens = g.token_ids("suppress_tokens");
    if (g.has("begin_suppress_tokens")) c.begin_suppress_tokens = g.token_ids("begin_suppress_tokens");
    c.languages = language_tokens(g);
    if (g.has("task_to_id")) {
      const Fields tasks = g.object("task_to_id");
      c.transcribe_token = optional_token(tasks, "transcribe");
      c.translate_token = optional_token(tasks, "translate");
    }
    c.no_timestamps_token = optional_token(g, "no_timestamps_token_id");
    c.prev_sot_token = optional_token(g, "prev_sot_token_id");
    c.max_initial_timestamp_index = g.integer_or("max_initial_timestamp_index", 50, 0, 1500);
    for (const auto& [name, id] : c.languages) check_token(c, id, generation_source, "lang_to_id.<|" + name + "|>");
    for (auto [id, field] : {std::pair{c.transcribe_token, "task_to_id.transcribe"},
                             std::pair{c.translate_token, "task_to_id.translate"},
                             std::pair{c.no_timestamps_token, "no_timestamps_token_id"},
                             std::pair{c.prev_sot_token, "prev_sot_token_id"}}) {
      if (id) check_token(c, *id, generation_source, field);
    }
  }
  check_token(c, c.decoder_start_token_id, config_source, "decoder_start_token_id");
  check_token(c, c.eos_token_id, config_source, "eos_token_id");

  if (!preprocessor_json.empty()) {
    const json pre_root = parse_json_text(preprocessor_json, preprocessor_source);
    const Fields p(pre_root, preprocessor_source);
    const int64_t mels = p.integer_or("feature_size", c.num_mel_bins, 1, 1024);
    if (mels != c.num_mel_bins) {
      p.fail("feature_size", "is " + std::to_string(mels) + " but config.json's num_mel_bins is " +
                                 std::to_string(c.num_mel_bins));
    }
    c.n_fft = p.integer_or("n_fft", 400, 2, 1 << 16);
    c.hop_length = p.integer_or("hop_length", 160, 1, 1 << 16);
    c.sampling_rate = p.integer_or("sampling_rate", 16000, 1, 1 << 20);
    c.chunk_length = p.integer_or("chunk_length", 30, 1, 3600);
    if (c.n_fft != 400 || c.hop_length != 160 || c.sampling_rate != 16000 || c.chunk_length != 30) {
      p.fail("n_fft", "hop_length, sampling_rate and chunk_length must be Whisper's 400, 160, 16000 and 30");
    }
  }
  // The stem halves 3000 frames (30 s at a hop of 160) to the encoder's positions.
  if (c.max_source_positions != 1500) {
    f.fail("max_source_positions", "is " + std::to_string(c.max_source_positions) +
                                       "; Whisper's 30 s windows make 1500 encoder positions");
  }
  return c;
}

WhisperConfig load_whisper_config(const std::filesystem::path& dir) {
  const auto config = dir / "config.json";
  const auto gen = dir / "generation_config.json";
  const auto pre = dir / "preprocessor_config.json";
  const std::string gen_text = std::filesystem::exists(gen) ? read_text(gen) : std::string();
  const std::string pre_text = std::filesystem::exists(pre) ? read_text(pre) : std::string();
  return parse_whisper_config(read_text(config), config.string(), gen_text, gen.string(), pre_text, pre.string());
}

}  // namespace wgx::models
