#include "audio/decode.h"

#include <sndfile.h>
#include <soxr.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace wgx::audio {
namespace {

// Frames decoded per step: small enough to stream, large enough that calls cost nothing.
constexpr sf_count_t kBlockFrames = 4096;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw AudioError("audio '" + name + "': " + what);
}

// A byte buffer read through libsndfile's virtual I/O (decode_audio), and the position in it.
struct MemorySource {
  std::span<const uint8_t> bytes;
  sf_count_t position = 0;
};

}  // namespace

struct AudioReader::State {
  std::string name;
  MemorySource memory;

  SNDFILE* file = nullptr;
  SF_INFO info{};
  soxr_t resampler = nullptr;  // null when the source is at kSampleRate already
  std::vector<float> interleaved;
  std::vector<float> mono;
  // Output made but not yet returned: pending[pending_at..].
  std::vector<float> pending;
  size_t pending_at = 0;
  int64_t frames_read = 0;
  bool finished = false;  // the source is read to its end and the resampler flushed

  ~State() {
    if (resampler) soxr_delete(resampler);
    if (file) sf_close(file);
  }

  void open_checked();
  void refill();
  void resample(const float* in, size_t frames);
  void flush();
};

namespace {

// libsndfile's virtual I/O over a byte buffer; user_data is the MemorySource.
sf_count_t vio_length(void* user) { return static_cast<sf_count_t>(static_cast<MemorySource*>(user)->bytes.size()); }

sf_count_t vio_seek(sf_count_t offset, int whence, void* user) {
  auto* s = static_cast<MemorySource*>(user);
  sf_count_t base = 0;
  if (whence == SEEK_CUR) base = s->position;
  if (whence == SEEK_END) base = static_cast<sf_count_t>(s->bytes.size());
  if (offset < -base) return -1;
  s->position = base + offset;
  return s->position;
}

sf_count_t vio_read(void* out, sf_count_t count, void* user) {
  auto* s = static_cast<MemorySource*>(user);
  const auto size = static_cast<sf_count_t>(s->bytes.size());
  if (count <= 0 || s->position >= size) return 0;
  const sf_count_t n = std::min(count, size - s->position);
  std::memcpy(out, s->bytes.data() + s->position, static_cast<size_t>(n));
  s->position += n;
  return n;
}

sf_count_t vio_write(const void*, sf_count_t, void*) { return 0; }

sf_count_t vio_tell(void* user) { return static_cast<MemorySource*>(user)->position; }

}  // namespace

void AudioReader::State::open_checked() {
  if (!file) {
    fail(name, std::string("not an audio file, a format this libsndfile does not read, or a "
                           "truncated header (libsndfile: ") + sf_strerror(nullptr) + ")");
  }
  if (info.channels < 1 || info.channels > kMaxChannels) {
    fail(name, std::to_string(info.channels) + " channels (1 to " + std::to_string(kMaxChannels) +
                   " are read)");
  }
  if (info.samplerate < kMinSourceRate || info.samplerate > kMaxSourceRate) {
    fail(name, "sample rate " + std::to_string(info.samplerate) + " Hz is out of range (" +
                   std::to_string(kMinSourceRate) + " to " + std::to_string(kMaxSourceRate) + " Hz)");
  }
  if (info.frames <= 0) fail(name, "no audio samples (zero length)");
  interleaved.resize(static_cast<size_t>(kBlockFrames) * static_cast<size_t>(info.channels));
  mono.resize(static_cast<size_t>(kBlockFrames));
  if (info.samplerate != kSampleRate) {
    soxr_error_t error = nullptr;
    const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
    const soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
    resampler = soxr_create(info.samplerate, kSampleRate, 1, &error, &io, &quality, nullptr);
    if (error) fail(name, std::string("cannot make the resampler (soxr: ") + error + ")");
  }
}

// Decodes one block (mixed to mono, resampled) into `pending`, or finishes at the end.
void AudioReader::State::refill() {
  const sf_count_t got = sf_readf_float(file, interleaved.data(), kBlockFrames);
  if (got <= 0) {
    if (sf_error(file) != SF_ERR_NO_ERROR) fail(name, std::string("decoding failed: ") + sf_strerror(file));
    if (frames_read == 0) fail(name, "no audio samples (zero length)");
    if (resampler) flush();
    finished = true;
    return;
  }
  const auto channels = static_cast<size_t>(info.channels);
  for (size_t f = 0; f < static_cast<size_t>(got); ++f) {
    double sum = 0;
    for (size_t c = 0; c < channels; ++c) {
      const float v = interleaved[f * channels + c];
      if (!std::isfinite(v)) {
        fail(name, std::string(std::isnan(v) ? "NaN" : "infinite") + " sample at frame " +
                       std::to_string(frames_read + static_cast<int64_t>(f)) + ", channel " +
                       std::to_string(c));
      }
      sum += v;
    }
    mono[f] = static_cast<float>(sum / static_cast<double>(channels));
  }
  frames_read += got;
  if (resampler) {
    resample(mono.data(), static_cast<size_t>(got));
  } else {
    pending.insert(pending.end(), mono.begin(), mono.begin() + got);
  }
}

// Feeds `frames` samples to soxr (in == nullptr: the end of input) and appends what comes out.
void AudioReader::State::resample(const float* in, size_t frames) {
  const double ratio = static_cast<double>(kSampleRate) / info.samplerate;
  size_t consumed = 0;
  while (true) {
    const size_t room = static_cast<size_t>(static_cast<double>(frames - consumed) * ratio) + 1024;
    const size_t start = pending.size();
    pending.resize(start + room);
    size_t in_done = 0, out_done = 0;
    const soxr_error_t error = soxr_process(resampler, in ? in + consumed : nullptr, frames - consumed,
                                            in ? &in_done : nullptr, pending.data() + start, room, &out_done);
    pending.resize(start + out_done);
    if (error) fail(name, std::string("resampling failed (soxr: ") + error + ")");
    // Finite float input near the float's limit (a float file's samples are nominally within
    // [-1, 1]) can overflow in the filter.
    const auto made = std::span(pending).subspan(start);
    if (!std::all_of(made.begin(), made.end(), [](float v) { return std::isfinite(v); })) {
      fail(name, "samples too large to resample (the result overflows a float)");
    }
    consumed += in_done;
    // Input: until soxr took all of it. End of input: until soxr has nothing more to give.
    if (in ? consumed == frames : out_done == 0) return;
    if (in && in_done == 0 && out_done == 0) fail(name, "resampling made no progress (soxr)");
  }
}

void AudioReader::State::flush() { resample(nullptr, 0); }

AudioReader::AudioReader(const std::filesystem::path& path) : state_(std::make_unique<State>()) {
  state_->name = path.string();
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) fail(state_->name, "no such file");
  if (std::filesystem::is_directory(status)) fail(state_->name, "is a directory, not an audio file");
  state_->file = sf_open(path.c_str(), SFM_READ, &state_->info);
  state_->open_checked();
}

AudioReader::AudioReader(std::span<const uint8_t> bytes, std::string_view name)
    : state_(std::make_unique<State>()) {
  state_->name = name;
  state_->memory.bytes = bytes;
  SF_VIRTUAL_IO io{vio_length, vio_seek, vio_read, vio_write, vio_tell};
  state_->file = sf_open_virtual(&io, SFM_READ, &state_->info, &state_->memory);
  state_->open_checked();
}

AudioReader::~AudioReader() = default;
AudioReader::AudioReader(AudioReader&&) noexcept = default;
AudioReader& AudioReader::operator=(AudioReader&&) noexcept = default;

size_t AudioReader::read(std::span<float> out) {
  State& s = *state_;
  size_t written = 0;
  while (written < out.size()) {
    if (s.pending_at == s.pending.size()) {
      s.pending.clear();
      s.pending_at = 0;
      if (s.finished) break;
      s.refill();
      continue;
    }
    const size_t n = std::min(out.size() - written, s.pending.size() - s.pending_at);
    std::copy_n(s.pending.begin() + static_cast<ptrdiff_t>(s.pending_at), n, out.begin() + static_cast<ptrdiff_t>(written));
    s.pending_at += n;
    written += n;
  }
  return written;
}

std::vector<float> AudioReader::read(size_t max_samples) {
  std::vector<float> out(max_samples);
  out.resize(read(std::span<float>(out)));
  return out;
}

bool AudioReader::done() const { return state_->finished && state_->pending_at == state_->pending.size(); }
int AudioReader::source_rate() const { return state_->info.samplerate; }
int AudioReader::source_channels() const { return state_->info.channels; }
int64_t AudioReader::source_frames_read() const { return state_->frames_read; }
double AudioReader::header_seconds() const {
  return static_cast<double>(state_->info.frames) / static_cast<double>(state_->info.samplerate);
}
const std::string& AudioReader::name() const { return state_->name; }

namespace {

Audio read_all(AudioReader& reader) {
  Audio audio;
  // A whole block's output at a time; the vector grows geometrically.
  constexpr size_t kPiece = 1 << 16;
  while (true) {
    const size_t start = audio.samples.size();
    audio.samples.resize(start + kPiece);
    const size_t got = reader.read(std::span<float>(audio.samples).subspan(start));
    audio.samples.resize(start + got);
    if (got < kPiece) break;
  }
  audio.source_rate = reader.source_rate();
  audio.source_channels = reader.source_channels();
  audio.source_frames = reader.source_frames_read();
  return audio;
}

}  // namespace

Audio load_audio(const std::filesystem::path& path) {
  AudioReader reader(path);
  return read_all(reader);
}

Audio decode_audio(std::span<const uint8_t> bytes, std::string_view name) {
  AudioReader reader(bytes, name);
  return read_all(reader);
}

}  // namespace wgx::audio
