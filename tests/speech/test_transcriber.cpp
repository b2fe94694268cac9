// Whisper's greedy decoding (speech/transcriber.h) against transformers on the tiny random
// checkpoints of tools/hf_reference/make_tiny_whisper.py: greedy tokens on transformers' full
// forward pass ("forward_greedy": each step's argmax after the suppressions; its generate()
// departs from its own forward pass on these checkpoints, see the script). From transformers'
// own features the generated tokens must be identical (language given, and detected; translate;
// timestamps); from the sample WAV through wgx's own audio input and features, the transcript's
// tokens and text too.
// Bad requests (an unknown language, empty audio) are errors that say why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "audio/decode.h"
#include "models/whisper.h"
#include "runtime_test_util.h"
#include "speech/transcriber.h"

namespace wgx::speech {
namespace {

using nlohmann::json;

std::filesystem::path folder(const char* name) { return std::filesystem::path(WGX_HF_DATA) / name; }

std::vector<float> read_f32_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

struct Loaded {
  json ref;
  std::unique_ptr<Transcriber> t;
};

Loaded load(const char* name) {
  const std::filesystem::path dir = folder(name);
  std::ifstream in(dir / "reference.json");
  Loaded l{json::parse(in), nullptr};
  l.t = std::make_unique<Transcriber>(runtime::testing::shared_context(), models::load_whisper(dir),
                                      tokenizer::Tokenizer::load(dir));
  return l;
}

// generate()'s sequences[0]: the prompt, then the new tokens.
std::vector<int32_t> generated_part(const json& seq, size_t prompt) {
  const auto all = seq.get<std::vector<int32_t>>();
  return {all.begin() + static_cast<ptrdiff_t>(prompt), all.end()};
}

class WhisperGreedy : public ::testing::TestWithParam<const char*> {};

TEST_P(WhisperGreedy, TokensAsTransformers) {
  Loaded l = load(GetParam());
  Transcriber& t = *l.t;
  t.encode(read_f32_file(folder(GetParam()) / "features.f32"));
  EXPECT_EQ(t.detect_language(), l.ref.at("detected_language").get<std::string>());

  // Each setting's prompt is the reference's start, and the generated tokens its rest.
  auto expect = [&](const char* key, const std::string& language, TranscribeOptions o) {
    SCOPED_TRACE(key);
    const auto& want = l.ref.at("forward_greedy").at(key);
    const std::vector<int32_t> p = t.prompt(language, o);
    ASSERT_EQ(std::vector<int32_t>(want.begin(), want.begin() + static_cast<ptrdiff_t>(p.size())), p);
    EXPECT_EQ(t.generate(p, o), generated_part(want, p.size()));
  };
  TranscribeOptions plain;
  plain.max_new_tokens = 24;
  expect("plain", "en", plain);
  // The detected language's prompt, as generate() without a language makes it.
  TranscribeOptions detected;
  detected.max_new_tokens = 8;
  expect("detected", t.detect_language(), detected);
  // Translate from German; and with timestamps (transformers' WhisperTimeStampLogitsProcessor
  // applied to the same forward pass). The four references differ from each other (the control
  // that each setting is what the prompt and the rules change).
  TranscribeOptions translate;
  translate.task = Task::Translate;
  translate.max_new_tokens = 16;
  expect("translate", "de", translate);
  TranscribeOptions timestamps;
  timestamps.timestamps = true;
  timestamps.max_new_tokens = 24;
  expect("timestamps", "en", timestamps);
  const std::vector<std::string> keys{"plain", "detected", "translate", "timestamps"};
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = i + 1; j < keys.size(); ++j) {
      EXPECT_NE(l.ref.at("forward_greedy").at(keys[i]), l.ref.at("forward_greedy").at(keys[j])) << keys[i] << " " << keys[j];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, WhisperGreedy, ::testing::Values("tiny_whisper", "tiny_whisper_v3"));

TEST(WhisperTranscribe, FromTheWavFile) {
  Loaded l = load("tiny_whisper");
  const audio::Audio a = audio::load_audio(folder("tiny_whisper") / "sample.wav");
  TranscribeOptions o;
  o.language = "en";
  o.max_new_tokens = 24;
  double last_done = -1;
  const Transcript r = l.t->transcribe(a.samples, o, [&](double done, double total) {
    EXPECT_GT(done, last_done);
    EXPECT_LE(done, total);
    last_done = done;
  });
  EXPECT_EQ(r.windows, 1);
  EXPECT_EQ(r.language, "en");
  EXPECT_EQ(r.tokens, generated_part(l.ref.at("forward_greedy").at("plain"), 4));
  EXPECT_EQ(r.text, l.ref.at("forward_greedy_text").at("plain").get<std::string>());
  ASSERT_EQ(r.segments.size(), 1u);
  EXPECT_NEAR(r.segments[0].end, 4.5, 1e-9);

  // Timestamps: every segment inside the audio, in order.
  o.timestamps = true;
  const Transcript ts = l.t->transcribe(a.samples, o);
  double last = 0;
  for (const Segment& s : ts.segments) {
    EXPECT_GE(s.start, last - 1e-9);
    EXPECT_GE(s.end, s.start);
    last = s.end;
  }
}

TEST(WhisperTranscribe, LongAudioInWindows) {
  Loaded l = load("tiny_whisper");
  const audio::Audio a = audio::load_audio(folder("tiny_whisper") / "sample.wav");
  std::vector<float> longer;
  while (longer.size() < 16000 * 40) longer.insert(longer.end(), a.samples.begin(), a.samples.end());
  TranscribeOptions o;
  o.language = "en";
  o.max_new_tokens = 4;
  const Transcript r = l.t->transcribe(longer, o);
  EXPECT_EQ(r.windows, 2);  // 40.5 s: a window of 30 s and one of 10.5 s
  ASSERT_EQ(r.segments.size(), 2u);
  EXPECT_DOUBLE_EQ(r.segments[1].start, 30.0);
}

// A file read a window at a time (the reader the API uses for files) gives what its samples in
// memory give, with and without timestamps (whose windows start again inside the last one).
TEST(WhisperTranscribe, FromAReaderAsFromSamples) {
  Loaded l = load("tiny_whisper");
  const audio::Audio a = audio::load_audio(folder("tiny_whisper") / "sample.wav");
  std::vector<int16_t> pcm;
  while (pcm.size() < 16000 * 70) {
    for (float x : a.samples) pcm.push_back(static_cast<int16_t>(std::lround(std::clamp(x, -1.f, 1.f) * 32767)));
  }
  const std::filesystem::path wav = std::filesystem::temp_directory_path() / "wgx_reader_test.wav";
  {
    std::ofstream out(wav, std::ios::binary);
    auto u32 = [&](uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
    auto u16 = [&](uint16_t v) { out.write(reinterpret_cast<const char*>(&v), 2); };
    const auto bytes = static_cast<uint32_t>(pcm.size() * 2);
    out.write("RIFF", 4);
    u32(36 + bytes);
    out.write("WAVEfmt ", 8);
    u32(16);
    u16(1);
    u16(1);
    u32(16000);
    u32(32000);
    u16(2);
    u16(16);
    out.write("data", 4);
    u32(bytes);
    out.write(reinterpret_cast<const char*>(pcm.data()), bytes);
  }
  const std::vector<float> samples = audio::load_audio(wav).samples;
  for (bool timestamps : {false, true}) {
    SCOPED_TRACE(timestamps ? "timestamps" : "plain");
    TranscribeOptions o;
    o.language = "en";
    o.timestamps = timestamps;
    o.max_new_tokens = 6;
    const Transcript want = l.t->transcribe(samples, o);
    audio::AudioReader reader(wav);
    double last_total = 0;
    const Transcript got = l.t->transcribe(reader, o, [&](double, double total) { last_total = total; });
    EXPECT_EQ(got.tokens, want.tokens);
    EXPECT_EQ(got.text, want.text);
    EXPECT_EQ(got.windows, want.windows);
    EXPECT_GE(got.windows, 3);
    ASSERT_EQ(got.segments.size(), want.segments.size());
    for (size_t i = 0; i < got.segments.size(); ++i) {
      EXPECT_EQ(got.segments[i].start, want.segments[i].start);
      EXPECT_EQ(got.segments[i].end, want.segments[i].end);
    }
    EXPECT_DOUBLE_EQ(got.audio_seconds, static_cast<double>(samples.size()) / 16000);
    EXPECT_DOUBLE_EQ(last_total, got.audio_seconds);
  }
  std::filesystem::remove(wav);
}

TEST(WhisperTranscribe, BadRequestsSayWhy) {
  Loaded l = load("tiny_whisper");
  const std::vector<float> second(16000, 0.0f);
  TranscribeOptions o;
  o.language = "xx";
  try {
    l.t->transcribe(second, o);
    ADD_FAILURE() << "an unknown language was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not one of the model's: de, en, es, fr, ja"), std::string::npos) << e.what();
  }
  EXPECT_THROW(l.t->transcribe({}, TranscribeOptions{}), std::invalid_argument);
  // Silence is audio: it transcribes to something (a random model's tokens), without an error.
  o.language = "en";
  o.max_new_tokens = 2;
  EXPECT_EQ(l.t->transcribe(second, o).windows, 1);
}

}  // namespace
}  // namespace wgx::speech
