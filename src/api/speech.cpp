// wgx::SpeechModel over the speech layer (src/speech): a Whisper folder built into its encoder and
// decoder programs, audio files decoded by the audio layer. The web build has neither (no
// libsndfile there): its SpeechModel says so.
#include <algorithm>
#include <chrono>
#include <mutex>

#include "api/internal.h"
#include "wgx/wgx.hpp"

#ifdef WGX_HAS_SPEECH
#include "audio/decode.h"
#include "audio/error.h"
#include "models/whisper.h"
#endif

namespace wgx {

#ifdef WGX_HAS_SPEECH

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

speech::TranscribeOptions speech_options(const TranscribeOptions& options) {
  speech::TranscribeOptions o;
  o.language = options.language;
  o.task = options.translate ? speech::Task::Translate : speech::Task::Transcribe;
  o.timestamps = options.timestamps;
  o.max_new_tokens = options.max_new_tokens;
  o.beams = options.beams;
  return o;
}

// `source`: samples in memory, or an audio::AudioReader read a window at a time.
template <typename Source>
Transcript run(SpeechModel::Impl& impl, Source&& source, const TranscribeOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const speech::TranscribeOptions o = speech_options(options);
  std::lock_guard lock(impl.mutex);
  const speech::Transcript r = impl.transcriber->transcribe(source, o, options.on_progress);
  Transcript out;
  out.text = r.text;
  out.language = r.language;
  for (const speech::Segment& s : r.segments) out.segments.push_back({s.start, s.end, s.text});
  out.windows = r.windows;
  out.tokens = static_cast<int64_t>(r.tokens.size());
  out.encode_seconds = r.encode_seconds;
  out.decode_seconds = r.decode_seconds;
  out.audio_seconds = r.audio_seconds;
  out.seconds = since(t0);
  return out;
}

}  // namespace

SpeechModel SpeechModel::load(const Engine& engine, const std::string& path, const SpeechLoadOptions& options) {
  return translated(ErrorKind::InvalidModel, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    models::WhisperLoadOptions o;
    const WeightFormat weights = options.weights.value_or(WeightFormat::F32);
    if (weights == WeightFormat::F16) throw Error(ErrorKind::BadArgument, "Whisper models load with f32 or q4 weights");
    o.weights = weights == WeightFormat::Q4 ? models::WeightFormat::Q4 : models::WeightFormat::F32;
    if (options.on_progress) {
      o.progress = [&](const models::ProgressEvent& e) {
        options.on_progress({e.done ? "done" : e.stage, e.step, since(t0)});
      };
    }
    if (!std::filesystem::is_directory(path)) {
      throw Error(ErrorKind::InvalidModel, path + ": not a folder (a Whisper model is a Hugging Face folder)");
    }
    const models::BuiltWhisper built = models::load_whisper(path, o);
    auto impl = std::make_shared<Impl>();
    impl->engine = engine.impl_;
    impl->transcriber = std::make_unique<speech::Transcriber>(*engine.impl_->gpu, built,
                                                              tokenizer::Tokenizer::load(path), engine.impl_->options);
    const models::WhisperConfig& c = built.config;
    SpeechModelInfo& info = impl->info;
    info.path = path;
    info.adapter = engine.impl_->gpu->adapter().device;
    info.mel_bins = c.num_mel_bins;
    info.encoder_layers = c.encoder_layers;
    info.decoder_layers = c.decoder_layers;
    info.d_model = c.d_model;
    info.vocab_size = c.vocab_size;
    for (const auto& [name, id] : c.languages) info.languages.push_back(name);
    info.load_seconds = since(t0);
    return SpeechModel(std::move(impl));
  });
}

bool SpeechModel::is_speech_model(const std::string& path) { return models::is_whisper_folder(path); }

std::vector<float> load_audio(const std::string& path) {
  try {
    return audio::load_audio(path).samples;
  } catch (const audio::AudioError& e) {
    throw Error(ErrorKind::BadArgument, e.what());
  }
}

Transcript SpeechModel::transcribe_file(const std::string& audio_path, const TranscribeOptions& options) const {
  return translated(ErrorKind::BadArgument, [&] {
    try {
      audio::AudioReader reader{std::filesystem::path(audio_path)};  // a window at a time: hours of audio fit
      return run(*impl_, reader, options);
    } catch (const audio::AudioError& e) {
      throw Error(ErrorKind::BadArgument, e.what());
    }
  });
}

Transcript SpeechModel::transcribe_file_bytes(std::span<const uint8_t> file, const TranscribeOptions& options) const {
  return translated(ErrorKind::BadArgument, [&] {
    try {
      audio::AudioReader reader(file, "<bytes>");
      return run(*impl_, reader, options);
    } catch (const audio::AudioError& e) {
      throw Error(ErrorKind::BadArgument, e.what());
    }
  });
}

Transcript SpeechModel::transcribe(std::span<const float> samples_16k, const TranscribeOptions& options) const {
  return translated(ErrorKind::BadArgument, [&] {
    try {
      return run(*impl_, samples_16k, options);
    } catch (const audio::AudioError& e) {  // a NaN or infinite sample
      throw Error(ErrorKind::BadArgument, e.what());
    }
  });
}

SpeechModelInfo SpeechModel::info() const { return impl_->info; }

SpeechStream SpeechModel::stream(const TranscribeOptions& options, const SpeechStreamOptions& stream) const {
  return translated(ErrorKind::BadArgument, [&] {
    speech::StreamOptions so;
    so.step = stream.step;
    so.max_buffer = stream.max_buffer;
    so.cut_search = std::min(so.cut_search, stream.max_buffer / 2);
    auto impl = std::make_unique<SpeechStream::Impl>();
    impl->model = impl_;
    impl->stream = std::make_unique<speech::Stream>(*impl_->transcriber, speech_options(options), so);
    return SpeechStream(std::move(impl));
  });
}

std::string SpeechStream::push(std::span<const float> samples_16k) {
  return translated(ErrorKind::BadArgument, [&] {
    std::lock_guard lock(impl_->model->mutex);
    return impl_->stream->push(samples_16k);
  });
}

std::string SpeechStream::finish() {
  return translated(ErrorKind::BadArgument, [&] {
    std::lock_guard lock(impl_->model->mutex);
    return impl_->stream->finish();
  });
}

std::string SpeechStream::text() const { return impl_->stream->text(); }
std::string SpeechStream::language() const { return impl_->stream->language(); }
double SpeechStream::audio_seconds() const { return impl_->stream->seconds(); }
int64_t SpeechStream::windows() const { return impl_->stream->hypotheses(); }

#else

struct SpeechModel::Impl {};

namespace {
[[noreturn]] void unavailable() {
  throw Error(ErrorKind::BadArgument, "this build of wgx has no speech support (no audio libraries)");
}
}  // namespace

SpeechModel SpeechModel::load(const Engine&, const std::string&, const SpeechLoadOptions&) { unavailable(); }
bool SpeechModel::is_speech_model(const std::string&) { return false; }
Transcript SpeechModel::transcribe_file(const std::string&, const TranscribeOptions&) const { unavailable(); }
Transcript SpeechModel::transcribe(std::span<const float>, const TranscribeOptions&) const { unavailable(); }
Transcript SpeechModel::transcribe_file_bytes(std::span<const uint8_t>, const TranscribeOptions&) const { unavailable(); }
SpeechModelInfo SpeechModel::info() const { unavailable(); }
SpeechStream SpeechModel::stream(const TranscribeOptions&, const SpeechStreamOptions&) const { unavailable(); }
std::vector<float> load_audio(const std::string&) { unavailable(); }

struct SpeechStream::Impl {};
std::string SpeechStream::push(std::span<const float>) { unavailable(); }
std::string SpeechStream::finish() { unavailable(); }
std::string SpeechStream::text() const { unavailable(); }
std::string SpeechStream::language() const { unavailable(); }
double SpeechStream::audio_seconds() const { unavailable(); }
int64_t SpeechStream::windows() const { unavailable(); }

#endif

SpeechStream::SpeechStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SpeechStream::SpeechStream(SpeechStream&&) noexcept = default;
SpeechStream& SpeechStream::operator=(SpeechStream&&) noexcept = default;
SpeechStream::~SpeechStream() = default;

SpeechModel::SpeechModel(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
SpeechModel::SpeechModel(const SpeechModel&) = default;
SpeechModel& SpeechModel::operator=(const SpeechModel&) = default;
SpeechModel::SpeechModel(SpeechModel&&) noexcept = default;
SpeechModel& SpeechModel::operator=(SpeechModel&&) noexcept = default;
SpeechModel::~SpeechModel() = default;

}  // namespace wgx
