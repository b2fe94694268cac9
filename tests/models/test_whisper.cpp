// Whisper's graphs (models/whisper.h) against transformers: the tiny random checkpoints of
// tools/hf_reference/make_tiny_whisper.py (data/hf/tiny_whisper: 80 mel bins, f32 file;
// tiny_whisper_v3: 128 mel bins as large-v3, f16 file), run in f32. The encoder gets
// transformers' own features (features.f32), so this checks the graphs alone; its output's first
// 256 rows must match encoder.f32, and the decoder's logits at every position of a fixed prompt
// (teacher-forced) must match reference.json's, both within abs 1e-3 OR rel 1e-3. Config errors
// name the file and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "model_test_util.h"
#include "models/error.h"
#include "models/safetensors.h"
#include "models/whisper.h"
#include "ops/quant/quantize.h"
#include "runtime_test_util.h"

namespace wgx::models::testing {
namespace {

using nlohmann::json;

constexpr double kTol = 1e-3;

std::filesystem::path folder(const char* name) { return std::filesystem::path(WGX_MODELS_TEST_DATA) / "hf" / name; }

std::vector<float> read_f32_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// Runs the encoder on the stored features and copies the cross-attention keys and values into
// the decoder's state on the GPU (Program::copy_to_state), as a transcription does.
void encode(runtime::Program& encoder, runtime::Program& decoder, const BuiltWhisper& m, const std::vector<float>& features) {
  encoder.set_input<float>("features", features, {1, m.config.num_mel_bins, 3000});
  encoder.execute();
  for (int64_t i = 0; i < m.config.decoder_layers; ++i) {
    for (const std::string& name : {whisper_cross_k(i), whisper_cross_v(i)}) encoder.copy_to_state(name, decoder, name);
  }
}

// The logits of every position of `prefix`, fed at once from position 0 (all_logits).
std::vector<float> prompt_logits(runtime::Program& decoder, const std::vector<int32_t>& prefix) {
  const auto n = static_cast<int64_t>(prefix.size());
  std::vector<int32_t> positions(prefix.size());
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int32_t>(i);
  decoder.set_sym("input_pos", 0);
  decoder.set_input<int32_t>("tokens", prefix, {1, n});
  decoder.set_input<int32_t>("positions", positions, {1, n});
  decoder.execute();
  return decoder.read_f32("logits");
}

class WhisperParity : public ::testing::TestWithParam<const char*> {};

TEST_P(WhisperParity, EncoderAndDecoderLogits) {
  const std::filesystem::path dir = folder(GetParam());
  std::ifstream in(dir / "reference.json");
  ASSERT_TRUE(in) << dir;
  const json ref = json::parse(in);
  WhisperLoadOptions o;
  o.all_logits = true;
  const BuiltWhisper m = load_whisper(dir, o);
  EXPECT_EQ(m.config.vocab_size, ref.at("vocab_size").get<int64_t>());
  gpu::Context& gpu = runtime::testing::shared_context();
  runtime::Program encoder(gpu, m.encoder, m.encoder_weights);
  runtime::Program decoder(gpu, m.decoder, m.decoder_weights);
  encode(encoder, decoder, m, read_f32_file(dir / "features.f32"));

  const int64_t d = m.config.d_model, rows = ref.at("encoder_rows").get<int64_t>();
  std::vector<float> enc = encoder.read_f32("encoder");
  ASSERT_EQ(enc.size(), static_cast<size_t>(1500 * d));
  enc.resize(static_cast<size_t>(rows * d));
  Diff enc_diff;
  enc_diff.add(enc, to_double(read_f32_file(dir / "encoder.f32")), kTol, kTol, "encoder");
  EXPECT_EQ(enc_diff.failures, 0u) << enc_diff.first_failure << " (max abs " << enc_diff.max_abs << ")";

  const auto prefix = ref.at("prefix").get<std::vector<int32_t>>();
  const std::vector<float> logits = prompt_logits(decoder, prefix);
  const auto vocab = static_cast<size_t>(m.config.vocab_size);
  ASSERT_EQ(logits.size(), prefix.size() * vocab);
  Diff diff;
  for (size_t r = 0; r < prefix.size(); ++r) {
    const std::vector<float> row(logits.begin() + static_cast<ptrdiff_t>(r * vocab),
                                 logits.begin() + static_cast<ptrdiff_t>((r + 1) * vocab));
    diff.add(row, ref.at("logits").at(r).get<std::vector<double>>(), kTol, kTol, "position " + std::to_string(r));
  }
  EXPECT_EQ(diff.failures, 0u) << diff.first_failure << " (max abs " << diff.max_abs << ")";
  std::printf("[ parity   ] %s: encoder max abs %.2e, logits max abs %.2e\n", GetParam(), enc_diff.max_abs, diff.max_abs);
}

// The same prompt a token a step (the decode path: one-row products, attention over the cache)
// must give the same logits as the whole prompt at once.
TEST_P(WhisperParity, StepByStepLogits) {
  const std::filesystem::path dir = folder(GetParam());
  std::ifstream in(dir / "reference.json");
  const json ref = json::parse(in);
  const BuiltWhisper m = load_whisper(dir);
  gpu::Context& gpu = runtime::testing::shared_context();
  runtime::Program encoder(gpu, m.encoder, m.encoder_weights);
  runtime::Program decoder(gpu, m.decoder, m.decoder_weights);
  encode(encoder, decoder, m, read_f32_file(dir / "features.f32"));
  const auto prefix = ref.at("prefix").get<std::vector<int32_t>>();
  Diff diff;
  for (size_t i = 0; i < prefix.size(); ++i) {
    const auto pos = static_cast<int32_t>(i);
    decoder.set_sym("input_pos", pos);
    decoder.set_input<int32_t>("tokens", std::vector<int32_t>{prefix[i]}, {1, 1});
    decoder.set_input<int32_t>("positions", std::vector<int32_t>{pos}, {1, 1});
    decoder.execute();
    diff.add(decoder.read_f32("logits"), ref.at("logits").at(i).get<std::vector<double>>(), kTol, kTol,
             "step " + std::to_string(i));
  }
  EXPECT_EQ(diff.failures, 0u) << diff.first_failure << " (max abs " << diff.max_abs << ")";
}

// q4 products (4-bit weights, int8 x where many rows multiply at once) against the same model in
// f32 with every product's weight rounded through q4 on the host (ops::dequantize_q4gsw): what
// is left is x's rounding to int8, so the encoder's output and each logits row must stay within
// 3% in L2 norm and pick the same token at all but one position. Control: the f32 model with
// the weights as they are differs from the rounded one by far more (q4's own error on these
// Gaussian weights, ~8% a product), so the test would notice unrounded or wrongly rounded weights.
TEST(WhisperQ4, MatchesF32WithQ4RoundedWeights) {
  const std::filesystem::path dir = folder("tiny_whisper");
  std::ifstream in(dir / "reference.json");
  const json ref = json::parse(in);
  const WhisperConfig config = load_whisper_config(dir);
  const Checkpoint checkpoint(dir);
  const WeightSource exact = checkpoint_weights(checkpoint);
  WeightSource rounded = exact;
  rounded.tensor = [&exact](const std::string& name, const std::vector<int64_t>& shape, const std::string& why) {
    SourceTensor t = exact.tensor(name, shape, why);
    const bool product = name.ends_with("_proj.weight") || name.ends_with("fc1.weight") || name.ends_with("fc2.weight");
    if (product) {
      const auto q = ops::quantize_q4gsw(t.values().data(), shape[0], shape[1], 32, graph::DType::f16);
      auto held = std::make_shared<const std::vector<float>>(
          ops::dequantize_q4gsw(q, shape[0], shape[1], 32, graph::DType::f16));
      t.read = [held, cols = t.cols](int64_t first, int64_t count, float* out) {
        std::copy_n(held->data() + first * cols, count * cols, out);
      };
    }
    return t;
  };
  WhisperLoadOptions o;
  o.all_logits = true;
  const BuiltWhisper want_model = build_whisper(config, rounded, o);
  o.weights = WeightFormat::Q4;
  const BuiltWhisper q4_model = build_whisper(config, exact, o);
  const std::vector<float> features = read_f32_file(dir / "features.f32");
  const auto prefix = ref.at("prefix").get<std::vector<int32_t>>();

  // The encoder's output and the teacher-forced logits of the prefix.
  auto run = [&](const BuiltWhisper& m) {
    gpu::Context& gpu = runtime::testing::shared_context();
    runtime::Program encoder(gpu, m.encoder, m.encoder_weights);
    runtime::Program decoder(gpu, m.decoder, m.decoder_weights);
    encode(encoder, decoder, m, features);
    const std::vector<float> logits = prompt_logits(decoder, prefix);
    return std::pair{encoder.read_f32("encoder"), logits};
  };
  const auto [want_enc, want_logits] = run(want_model);
  const auto [q4_enc, q4_logits] = run(q4_model);
  auto rel_l2 = [](std::span<const float> a, std::span<const float> b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      num += (double{a[i]} - b[i]) * (double{a[i]} - b[i]);
      den += double{b[i]} * b[i];
    }
    return std::sqrt(num / den);
  };
  const double enc_err = rel_l2(q4_enc, want_enc);
  const auto vocab = static_cast<size_t>(config.vocab_size);
  int agree = 0;
  double worst = 0, control = 1e9;
  for (size_t r = 0; r < prefix.size(); ++r) {
    const std::span<const float> got(q4_logits.data() + r * vocab, vocab), want(want_logits.data() + r * vocab, vocab);
    worst = std::max(worst, rel_l2(got, want));
    agree += std::max_element(got.begin(), got.end()) - got.begin() == std::max_element(want.begin(), want.end()) - want.begin();
    const std::vector<float> f32_row = ref.at("logits").at(r).get<std::vector<float>>();
    control = std::min(control, rel_l2(f32_row, want));
  }
  std::printf("[ q4       ] encoder L2 error %.4f, worst logits row %.4f, %d/%zu argmax agree; "
              "f32 weights against rounded ones: at least %.3f\n", enc_err, worst, agree, prefix.size(), control);
  EXPECT_LT(enc_err, 0.03);
  EXPECT_LT(worst, 0.03);
  EXPECT_GE(agree, static_cast<int>(prefix.size()) - 1);
  EXPECT_GT(control, 0.1);
}

INSTANTIATE_TEST_SUITE_P(Tiny, WhisperParity, ::testing::Values("tiny_whisper", "tiny_whisper_v3"));

TEST(WhisperConfig, ReadsGenerationTokens) {
  const WhisperConfig c = load_whisper_config(folder("tiny_whisper"));
  EXPECT_EQ(c.num_mel_bins, 80);
  EXPECT_EQ(c.languages.size(), 5u);
  ASSERT_TRUE(c.no_timestamps_token && c.transcribe_token && c.translate_token);
  EXPECT_EQ(*c.timestamp_begin(), *c.no_timestamps_token + 1);
  EXPECT_EQ(c.languages.at("en"), c.decoder_start_token_id + 1);
  EXPECT_TRUE(is_whisper_folder(folder("tiny_whisper")));
  EXPECT_FALSE(is_whisper_folder(folder("tiny_llama")));
}

TEST(WhisperConfig, RejectsWhatItCannotRun) {
  std::ifstream in(folder("tiny_whisper") / "config.json");
  json base = json::parse(in);
  auto expect_error = [&](json config, const std::string& words) {
    try {
      parse_whisper_config(config.dump(), "config.json");
      ADD_FAILURE() << "accepted: " << words;
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  json c = base;
  c["activation_function"] = "relu";
  expect_error(c, "activation_function");
  c = base;
  c["decoder_attention_heads"] = 5;
  expect_error(c, "does not divide d_model");
  c = base;
  c["max_source_positions"] = 1000;
  expect_error(c, "1500 encoder positions");
  c = base;
  c["decoder_start_token_id"] = 99999;
  expect_error(c, "outside the vocabulary");
  c = base;
  c.erase("d_model");
  expect_error(c, "d_model: is missing");
  EXPECT_NO_THROW(parse_whisper_config(base.dump(), "config.json"));  // the unmodified config is fine
}

}  // namespace
}  // namespace wgx::models::testing
