// Beam search (TranscribeOptions::beams) with the demo speech model (models/speech) on a held-out
// WAV, against transformers' generate(num_beams = 1, 2, 4) (tests/models/data/speech_demo/beams.json,
// tools/speech_demo/beam_reference.py): the tokens after the prompt and the text are identical at
// each beam count. The control: the three references differ from one another on this file, so a
// search that fell back to greedy, or kept fewer hypotheses than asked, would fail. The beams'
// extra decoders are made by the first search and get the window's keys and values then.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "audio/decode.h"
#include "models/whisper.h"
#include "runtime_test_util.h"
#include "speech/transcriber.h"

namespace wgx::speech {
namespace {

using nlohmann::json;

constexpr const char* kFile = "tests/models/data/speech_demo/0_000.wav";

json reference() {
  std::ifstream in(WGX_SPEECH_BEAMS);
  return json::parse(in);
}

// transformers' row for kFile at `beams`.
const json& row(const json& ref, int64_t beams) {
  const json& files = ref.at("files");
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i] == kFile) return ref.at("beams").at(std::to_string(beams)).at(i);
  }
  throw std::runtime_error(std::string("beams.json has no ") + kFile);
}

std::vector<int32_t> tokens_of(const json& r) { return r.at("tokens").get<std::vector<int32_t>>(); }

TEST(WhisperBeams, TokensAndTextAsTransformers) {
  const json ref = reference();
  // The control: this file's three references differ.
  ASSERT_NE(tokens_of(row(ref, 1)), tokens_of(row(ref, 2)));
  ASSERT_NE(tokens_of(row(ref, 1)), tokens_of(row(ref, 4)));
  ASSERT_NE(tokens_of(row(ref, 2)), tokens_of(row(ref, 4)));

  Transcriber t(runtime::testing::shared_context(), models::load_whisper(WGX_SPEECH_DEMO),
                tokenizer::Tokenizer::load(WGX_SPEECH_DEMO));
  TranscribeOptions o;
  o.max_new_tokens = 64;
  o.beams = 4;
  const audio::Audio a = audio::load_audio(std::string(WGX_SOURCE_DIR) + "/" + kFile);
  const Transcript r = t.transcribe(a.samples, o);
  EXPECT_EQ(r.tokens, tokens_of(row(ref, 4)));
  EXPECT_EQ(r.text, row(ref, 4).at("text").get<std::string>());

  // The same window (the decoders keep its keys and values), greedy and with two beams.
  const std::vector<int32_t> prompt = t.prompt("", o);
  ASSERT_EQ(prompt, row(ref, 1).at("prompt").get<std::vector<int32_t>>());
  for (const int64_t beams : std::vector<int64_t>{1, 2, 4}) {
    SCOPED_TRACE("beams " + std::to_string(beams));
    o.beams = beams;
    EXPECT_EQ(t.generate(prompt, o), tokens_of(row(ref, beams)));
  }
}

TEST(WhisperBeams, BadCountsSayWhy) {
  Transcriber t(runtime::testing::shared_context(), models::load_whisper(WGX_SPEECH_DEMO),
                tokenizer::Tokenizer::load(WGX_SPEECH_DEMO));
  for (const int64_t beams : std::vector<int64_t>{0, -1, kMaxBeams + 1}) {
    TranscribeOptions o;
    o.beams = beams;
    try {
      t.check(o);
      ADD_FAILURE() << beams << " beams were accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("beams must be 1 (greedy) to 16"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace wgx::speech
