// Streaming transcription: audio arrives in pieces, text comes out once it is stable.
//
// Whisper's encoder hears a whole 30 s window and has no incremental form, so a stream keeps the
// audio since its last cut (the buffer) and transcribes the buffer again each time `step`
// seconds more have arrived. A word is committed (final: returned, never taken back) once two
// hypotheses in a row agree on it and on every word before it (LocalAgreement-2). When the buffer
// would outgrow `max_buffer` seconds, the stream cuts it at the quietest 0.1 s of its last
// `cut_search` seconds: the audio before the cut is transcribed once more and the words of that
// hypothesis not yet committed are committed; the audio after the cut begins the next buffer.
// finish() does the same with all that is left.
//
// What comes out depends only on the samples, not on how they were split into push() calls:
// the stream decodes at every `step` seconds of audio.
//
// Audio shorter than max_buffer gives the text of the whole audio at once (Transcriber) when
// every early commit agrees with the last hypothesis, which the agreement of two hypotheses makes
// likely; where the final hypothesis changed a committed word, the committed word stays in its
// place (the final hypothesis's words follow from the committed count on). At a cut, a word spoken across the
// quietest point may be split or lost.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "speech/transcriber.h"

namespace wgx::speech {

struct StreamOptions {
  double step = 1.0;         // seconds of new audio between two hypotheses
  double max_buffer = 24.0;  // seconds of audio a hypothesis hears at most (< 30)
  double cut_search = 8.0;   // the cut lies in the buffer's last this-many seconds
};

class Stream {
 public:
  // Throws std::invalid_argument for options the model cannot follow (Transcriber::check) or
  // stream options out of range. Timestamps are not streamed.
  Stream(Transcriber& transcriber, TranscribeOptions options, StreamOptions stream = {});

  // Mono 16 kHz samples in -> the text they committed (often empty).
  std::string push(std::span<const float> samples);
  // The end of the audio: the text of what is left.
  std::string finish();

  const std::string& text() const { return text_; }  // committed so far
  const std::string& language() const { return language_; }
  int64_t hypotheses() const { return hypotheses_; }  // windows decoded so far
  double seconds() const { return static_cast<double>(heard_) / kRate; }  // audio pushed so far

 private:
  static constexpr int kRate = 16000;
  // The buffer's first `samples` samples, transcribed: its words (each with its leading space).
  std::vector<std::string> hypothesis(size_t samples);
  // Decodes the buffer (cutting it first if it would be too long) and commits what two
  // hypotheses agree on.
  std::string advance();
  // Commits `words` after the words of this buffer already committed; the buffer restarts at
  // `cut` samples.
  std::string close_buffer(const std::vector<std::string>& words, size_t cut);
  std::string commit(std::span<const std::string> words);
  size_t quietest_cut() const;

  Transcriber& t_;
  TranscribeOptions options_;
  StreamOptions stream_;
  std::string language_;
  std::vector<float> buffer_;
  size_t since_hypothesis_ = 0;         // samples added to the buffer since the last hypothesis
  std::vector<std::string> committed_;  // words of this buffer committed
  std::vector<std::string> previous_;   // the last hypothesis of this buffer
  std::string text_;
  int64_t hypotheses_ = 0;
  size_t heard_ = 0;
  bool finished_ = false;
};

}  // namespace wgx::speech
