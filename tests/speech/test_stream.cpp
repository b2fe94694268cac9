// Streaming transcription (speech/stream.h) with the demo speech model (models/speech) on its
// held-out sample: the streamed text equals transformers' text for the whole file, some of it
// is committed before the audio ends, and the pieces the audio arrives in do not matter. The
// control transcribes each piece on its own (the stream's state reset between pieces): its text
// differs. Bad options and input are errors.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "audio/decode.h"
#include "models/whisper.h"
#include "runtime_test_util.h"
#include "speech/stream.h"

namespace wgx::speech {
namespace {

Transcriber& demo() {
  static Transcriber t(runtime::testing::shared_context(), models::load_whisper(WGX_SPEECH_DEMO),
                       tokenizer::Tokenizer::load(WGX_SPEECH_DEMO));
  return t;
}

// transformers' greedy text for models/speech/sample.wav.
std::string reference_text() {
  std::ifstream in(WGX_SPEECH_REFERENCE);
  const nlohmann::json ref = nlohmann::json::parse(in);
  for (size_t i = 0; i < ref["files"].size(); ++i) {
    if (ref["files"][i] == "models/speech/sample.wav") return ref["transformers"][i];
  }
  ADD_FAILURE() << "no reference for the sample";
  return "";
}

StreamOptions with_step(double step) {
  StreamOptions o;
  o.step = step;
  return o;
}
StreamOptions two_s() { return with_step(2.0); }
StreamOptions five_s() { return with_step(5.0); }

std::vector<float> sample() { return audio::load_audio(std::string(WGX_SPEECH_DEMO) + "/sample.wav").samples; }

TEST(Stream, TextEqualsTheWholeFileAndComesEarly) {
  const std::vector<float> audio = sample();
  ASSERT_GT(audio.size(), 4 * 16000u);
  Stream s(demo(), {}, two_s());
  std::string streamed, before_end;
  const size_t piece = 11200;  // 0.7 s: not a divisor of the step
  for (size_t at = 0; at < audio.size(); at += piece) {
    streamed += s.push(std::span<const float>(audio).subspan(at, std::min(piece, audio.size() - at)));
  }
  before_end = streamed;
  streamed += s.finish();
  EXPECT_EQ(streamed, s.text());
  EXPECT_EQ(s.text(), reference_text());
  EXPECT_EQ(s.hypotheses(), 3);  // at 2 s and 4 s, then the end
  EXPECT_FALSE(before_end.empty()) << "nothing was committed before the audio ended";
  EXPECT_EQ(s.text().rfind(before_end, 0), 0u);
  EXPECT_NEAR(s.seconds(), static_cast<double>(audio.size()) / 16000, 1e-9);

  // All the audio in one push: the same hypotheses, the same text.
  Stream whole(demo(), {}, two_s());
  const std::string at_once = whole.push(audio);
  EXPECT_EQ(at_once, before_end);
  EXPECT_EQ(at_once + whole.finish(), s.text());
  EXPECT_EQ(whole.hypotheses(), 3);
}

// The negative control: the state reset between pieces (each 2 s piece a stream of its own)
// loses the words across the pieces' edges.
TEST(Stream, ResetBetweenPiecesDiverges) {
  const std::vector<float> audio = sample();
  std::string text;
  for (size_t at = 0; at < audio.size(); at += 32000) {
    Stream piece(demo(), {}, two_s());
    text += piece.push(std::span<const float>(audio).subspan(at, std::min<size_t>(32000, audio.size() - at)));
    text += piece.finish();
  }
  EXPECT_NE(text, reference_text());
}

// Audio longer than the buffer: the stream cuts it at a quiet point and goes on. The sample
// twice with 1 s of silence between, a buffer of 4 s and a step of 2 s: every word of both
// readings comes out, in order (a word cut at the quiet point would show as a difference).
TEST(Stream, CutsLongAudioAtAQuietPoint) {
  const std::vector<float> one = sample();
  std::vector<float> audio = one;
  audio.resize(audio.size() + 16000, 0.0f);
  audio.insert(audio.end(), one.begin(), one.end());
  StreamOptions o;
  o.step = 2.0;
  o.max_buffer = 6.0;
  o.cut_search = 3.0;
  Stream s(demo(), {}, o);
  std::string streamed = s.push(audio);
  streamed += s.finish();
  EXPECT_EQ(streamed, s.text());
  EXPECT_EQ(s.text(), reference_text() + reference_text());
}

TEST(Stream, BadOptionsAndInput) {
  TranscribeOptions timestamps, german;
  timestamps.timestamps = true;
  german.language = "de";  // the model is English-only
  EXPECT_THROW(Stream(demo(), timestamps), std::invalid_argument);
  EXPECT_THROW(Stream(demo(), german), std::invalid_argument);
  StreamOptions no_step, too_long;
  no_step.step = 0;
  too_long.max_buffer = 30;
  EXPECT_THROW(Stream(demo(), {}, no_step), std::invalid_argument);
  EXPECT_THROW(Stream(demo(), {}, too_long), std::invalid_argument);
  Stream s(demo(), {}, five_s());
  const std::vector<float> nan(10, NAN);
  EXPECT_THROW(s.push(nan), std::invalid_argument);
  EXPECT_EQ(s.finish(), "");  // nothing heard
  EXPECT_THROW(s.push(std::vector<float>(10, 0.0f)), std::invalid_argument);
}

}  // namespace
}  // namespace wgx::speech
