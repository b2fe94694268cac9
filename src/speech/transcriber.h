// Speech to text with Whisper: audio in 30 s windows through the encoder program, then greedy
// decoding on the decoder program, as transformers' generate() does it (models/whisper.h has
// the graphs; timestamps.h the rules each step's logits pass through).
//
//   speech::Transcriber t(gpu, models::load_whisper(dir), tokenizer::Tokenizer::load(dir));
//   speech::Transcript r = t.transcribe(audio::load_audio("talk.flac").samples, {});
//
// A window: log-mel features (audio/mel.h) -> the encoder -> its cross-attention keys and values
// copied into the decoder's state on the GPU (runtime::Program::copy_to_state) -> the prompt
// <|startoftranscript|> [<|lang|> <|task|>] [<|notimestamps|>] -> one token a step, the last
// position's logits read back and filtered on the host, until <|endoftext|> (or beam search over
// decoder programs that share the weights, a hypothesis's caches copied on the GPU where it forks). Without
// timestamps the windows follow each other every 30 s; with them, a window that ends inside a
// segment is followed by one starting at that segment's start.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "audio/decode.h"
#include "gpu/context.h"
#include "models/whisper.h"
#include "runtime/options.h"
#include "runtime/program.h"
#include "speech/timestamps.h"
#include "tokenizer/tokenizer.h"

namespace wgx::speech {

enum class Task { Transcribe, Translate };

struct TranscribeOptions {
  std::string language;  // "en"; empty: detected from the first window (multilingual models)
  Task task = Task::Transcribe;
  bool timestamps = false;
  int64_t max_new_tokens = 0;  // per window; 0: half the decoder's positions (224), as Whisper does
  // 1: greedy; more: beam search over that many hypotheses, as transformers' generate(num_beams)
  // (length penalty 1, early_stopping false), each in a decoder program of its own.
  int64_t beams = 1;
};

constexpr int64_t kMaxBeams = 16;

struct Segment {
  double start = 0, end = 0;  // seconds from the audio's start
  std::string text;
};

struct Transcript {
  std::string text;      // the segments' text, joined
  std::string language;  // given or detected ("" for an English-only model)
  std::vector<Segment> segments;
  std::vector<int32_t> tokens;  // every window's generated tokens, timestamps included
  int64_t windows = 0;
  double audio_seconds = 0;  // the samples transcribed
  // Wall time: features and the encoder with its keys and values in the decoder's state; the
  // decoding steps (language detection included).
  double encode_seconds = 0, decode_seconds = 0;
};

// Told after each window: the seconds of audio done so far and the total.
using TranscribeProgress = std::function<void(double done_seconds, double total_seconds)>;

class Transcriber {
 public:
  Transcriber(gpu::Context& gpu, const models::BuiltWhisper& model, tokenizer::Tokenizer tokenizer,
              const runtime::RuntimeOptions& options = {});

  const models::WhisperConfig& config() const { return config_; }
  const tokenizer::Tokenizer& tokenizer() const { return tok_; }

  // Mono 16 kHz samples (audio/decode.h) -> text. Throws std::invalid_argument for options the
  // model cannot follow (an unknown language, translate on an English-only model, timestamps on
  // a model without them) and for empty audio.
  Transcript transcribe(std::span<const float> samples, const TranscribeOptions& options,
                        const TranscribeProgress& progress = {});
  // The same from a reader, a window at a time: memory holds one window of samples, whatever
  // the audio's length (hours of it). The progress's total is the header's length. Throws
  // audio::AudioError where the reader does.
  Transcript transcribe(audio::AudioReader& reader, const TranscribeOptions& options,
                        const TranscribeProgress& progress = {});

  // std::invalid_argument for options the model cannot follow.
  void check(const TranscribeOptions& options) const;
  // The text of generated tokens (those below <|endoftext|>: no timestamps, no specials).
  std::string text_of(std::span<const int32_t> tokens) const;

  // The steps of one window (for tests and streams). encode(): features [n_mels, 3000] into the encoder and
  // its keys and values into the decoder's state. detect_language(): the language token likeliest
  // after <|startoftranscript|> ("en"). prompt(): the window's first tokens. generate(): the
  // tokens after `prompt` (greedy, or the best beam), up to and with <|endoftext|>.
  void encode(std::span<const float> features);
  std::string detect_language();
  std::vector<int32_t> prompt(const std::string& language, const TranscribeOptions& options) const;
  std::vector<int32_t> generate(const std::vector<int32_t>& prompt, const TranscribeOptions& options);
  // The encoder run again on the last window's features, each dispatch timed on the GPU (empty
  // without timestamp queries): wgx transcribe --profile.
  std::vector<gpu::DispatchTiming> profile_encoder();

 private:
  // The last position's logits after feeding `tokens` at `pos` to `decoder` (decoder_ by default).
  std::vector<float> step(std::span<const int32_t> tokens, int64_t pos, runtime::Program* decoder = nullptr);
  // The samples from `seek` on, up to `count` of them (fewer only at the audio's end; `seek` never
  // goes back before an earlier call's).
  using WindowSource = std::function<std::span<const float>(size_t seek, size_t count)>;
  Transcript transcribe_windows(const WindowSource& window_at, double total_seconds, const TranscribeOptions& options,
                                const TranscribeProgress& progress);
  // Whisper's rules for the next token after `generated`, in place on its logits or log-probs.
  void filter(std::span<float> scores, const std::vector<int32_t>& generated, const TranscribeOptions& o) const;
  std::vector<int32_t> generate_beams(const std::vector<int32_t>& prompt, const TranscribeOptions& o, int64_t limit);
  // decoder_ and at least `n` - 1 more decoders, each with the window's cross keys and values.
  void ensure_decoders(size_t n);

  gpu::Context& gpu_;
  models::WhisperConfig config_;
  tokenizer::Tokenizer tok_;
  std::unique_ptr<runtime::Program> encoder_, decoder_;
  // Beam search's further decoders (made when first needed), sharing decoder_'s weights.
  graph::Graph decoder_graph_;
  runtime::RuntimeOptions options_;
  std::vector<std::unique_ptr<runtime::Program>> beam_decoders_;
  std::optional<TimestampTokens> ts_;
};

}  // namespace wgx::speech
