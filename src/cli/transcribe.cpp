// wgx transcribe: speech to text with a Whisper folder, through wgx::SpeechModel.
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>

#include "api/internal.h"
#include "cli/commands.h"
#include "cli/llm_common.h"

namespace wgx::cli {

namespace {

constexpr const char* kUsage = R"(usage: wgx transcribe --model PATH FILE... [options]

The text of audio files (WAV, FLAC or Ogg; any rate and channels; '-' reads stdin) by a Whisper
model (a Hugging Face folder of WhisperForConditionalGeneration), decoded in 30 s windows. Prints the
text on stdout (with --timestamps, a line per segment: [start --> end] text); progress per
window and timings on stderr. The model loads once for all the files; with more than one, each
file's text follows a line "==> FILE <==", and --json writes one object a line, with "file".

  --model PATH        the Whisper folder
  --language L        the spoken language ("en", "de", ...; default: detected)
  --task T            transcribe (default) or translate (into English)
  --timestamps        segments with their times
  --max-new-tokens N  tokens per window at most (default: half the model's positions, 224)
  --beams N           beam search over N hypotheses (2 to 16; default 1: greedy), as
                      transformers' generate(num_beams=N)
  --weights W         f32 (default) or q4 (the products of the encoder and decoder)
  --raw               FILE (or stdin) is raw PCM: signed 16-bit little-endian, mono, 16 kHz
                      (what `ffmpeg -i IN -f s16le -ac 1 -ar 16000 -` writes)
  --json              a JSON object on stdout instead
  --stream            print the text as it becomes final, the audio read as it arrives: one
                      input, raw PCM (--raw) from stdin or a file as it is written, or an audio
                      file read in pieces; a word comes out once two hypotheses agree on it
  --step S            with --stream: seconds of audio between hypotheses (default 1)
  --idle S            with --stream from a raw PCM file: at its end, wait for it to grow; the
                      stream ends once it has not grown for S seconds (default 2; 0: at its end)
  --profile           then the encoder's GPU time per kind of op on the last window (stderr;
                      needs timestamp queries: a GPU adapter)

)";

std::string clock(double seconds) {
  const auto ms = static_cast<long long>(seconds * 1000 + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld.%03lld", ms / 60000, ms / 1000 % 60, ms % 1000);
  return buf;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(' ');
  return a == std::string::npos ? std::string() : s.substr(a);
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  if (path == "-") {
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("transcribe: cannot read " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Signed 16-bit little-endian PCM -> samples in [-1, 1); an odd last byte is left out.
std::vector<float> pcm16(std::span<const uint8_t> bytes) {
  std::vector<float> samples(bytes.size() / 2);
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto v = static_cast<int16_t>(static_cast<uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8)));
    samples[i] = static_cast<float>(v) / 32768.0f;
  }
  return samples;
}

Transcript transcribe_one(const SpeechModel& m, const std::string& file, bool raw, const std::vector<uint8_t>& bytes,
                          const TranscribeOptions& o) {
  if (raw) {
    if (bytes.size() % 2 != 0) throw std::invalid_argument("transcribe: " + file + ": raw PCM with an odd number of bytes");
    return m.transcribe(pcm16(bytes), o);
  }
  if (file == "-") return m.transcribe_file_bytes(bytes, o);
  return m.transcribe_file(file, o);
}

// One file's transcript on stdout. `file` is empty when it is the only one: then the output has
// no name in it, as before several files were accepted.
void print_transcript(const Transcript& t, const std::string& file, bool json, bool timestamps) {
  if (json) {
    nlohmann::json segs = nlohmann::json::array();
    for (const TranscriptSegment& s : t.segments) segs.push_back({{"start", s.start}, {"end", s.end}, {"text", s.text}});
    nlohmann::json out = {{"text", t.text}, {"language", t.language}, {"segments", segs},
                          {"audio_seconds", t.audio_seconds}, {"seconds", t.seconds}, {"windows", t.windows},
                          {"tokens", t.tokens}, {"encode_seconds", t.encode_seconds},
                          {"decode_seconds", t.decode_seconds}};
    if (!file.empty()) out["file"] = file;
    std::puts(out.dump(file.empty() ? 2 : -1).c_str());
    std::fflush(stdout);
    return;
  }
  if (!file.empty()) std::printf("==> %s <==\n", file.c_str());
  if (timestamps) {
    for (const TranscriptSegment& s : t.segments) {
      std::printf("[%s --> %s] %s\n", clock(s.start).c_str(), clock(s.end).c_str(), trimmed(s.text).c_str());
    }
  } else {
    std::printf("%s\n", trimmed(t.text).c_str());
  }
  std::fflush(stdout);
}

// The encoder's dispatches grouped by what they do: the label without its layer ("layers.7.fc1"
// -> "fc1"), summed over the layers, largest first.
void print_encoder_profile(const SpeechModel& m) {
  const std::vector<gpu::DispatchTiming> t = Internals::impl(m).transcriber->profile_encoder();
  if (t.empty()) {
    std::fputs("wgx: --profile: this adapter has no timestamp queries\n", stderr);
    return;
  }
  std::map<std::string, std::pair<double, int>> by;
  double total = 0;
  for (const gpu::DispatchTiming& d : t) {
    std::string key = d.label;
    if (key.rfind("layers.", 0) == 0) key = key.substr(key.find('.', 7) + 1);
    if (const size_t p = key.find("model.decoder.layers."); p != std::string::npos) key = "cross " + key.substr(key.find('.', p + 21) + 1);
    by[key].first += d.microseconds();
    ++by[key].second;
    total += d.microseconds();
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> rows(by.begin(), by.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::fprintf(stderr, "wgx: encoder, one window, GPU time per op (each dispatch timed alone): %.3f ms in all\n", total / 1000);
  for (const auto& [name, v] : rows) {
    std::fprintf(stderr, "  %-40s %9.3f ms  %5.1f%%  %4d dispatches\n", name.c_str(), v.first / 1000, 100 * v.first / total,
                 v.second);
  }
}

// --stream: the input read as it arrives, each final piece of text printed at once.
// A raw PCM file (not stdin) is followed as it is written: at its end the reader polls every 50
// ms, and the stream ends once the file has not grown for `idle` seconds.
int run_stream(const SpeechModel& m, const std::string& file, bool raw, const TranscribeOptions& o,
               const SpeechStreamOptions& so, double idle) {
  SpeechStream s = m.stream(o, so);
  bool started = false;
  const auto print = [&](const std::string& piece) {
    if (piece.empty()) return;
    std::fputs(started ? piece.c_str() : trimmed(piece).c_str(), stdout);
    std::fflush(stdout);
    started = true;
  };
  const auto t0 = std::chrono::steady_clock::now();
  if (raw) {
    // 0.1 s of PCM at a time; a sample split between two reads waits for its second byte.
    const int fd = file == "-" ? STDIN_FILENO : ::open(file.c_str(), O_RDONLY);
    if (fd < 0) throw std::invalid_argument("transcribe: cannot read " + file);
    std::vector<uint8_t> bytes(1 + 3200);
    size_t have = 0;  // 0, or 1: the first byte of a sample the last read split
    auto last_growth = std::chrono::steady_clock::now();
    bool waited = false;  // at the file's end since the last read that gave bytes
    for (;;) {
      const ssize_t n = ::read(fd, bytes.data() + have, 3200);
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 && fd != STDIN_FILENO &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - last_growth).count() < idle) {
        waited = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      if (n <= 0) break;
      if (waited) std::fprintf(stderr, "wgx: %s grew; reading on\n", file.c_str());
      waited = false;
      last_growth = std::chrono::steady_clock::now();
      have += static_cast<size_t>(n);
      const std::vector<float> samples = pcm16(std::span<const uint8_t>(bytes).first(have));
      if (have % 2 != 0) bytes[0] = bytes[have - 1];
      have %= 2;
      print(s.push(samples));
    }
    if (fd != STDIN_FILENO) ::close(fd);
    if (have != 0) throw std::invalid_argument("transcribe: " + file + ": raw PCM with an odd number of bytes");
  } else {
    const std::vector<float> samples = load_audio(file);
    for (size_t at = 0; at < samples.size(); at += 1600) {
      print(s.push(std::span<const float>(samples).subspan(at, std::min<size_t>(1600, samples.size() - at))));
    }
  }
  print(s.finish());
  std::fputs("\n", stdout);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "wgx: streamed %.1f s of audio in %.2f s, %lld hypotheses (a step of %.2f s)\n",
               s.audio_seconds(), seconds, static_cast<long long>(s.windows()), so.step);
  return 0;
}

}  // namespace

int run_transcribe(const GlobalOptions& global, const std::vector<std::string>& argv) {
  for (const std::string& arg : argv) {
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  std::string model;
  std::vector<std::string> files;
  SpeechLoadOptions load;
  TranscribeOptions o;
  bool json = false, profile = false, raw = false, stream = false;
  SpeechStreamOptions stream_options;
  std::optional<double> idle;  // --idle, or the default 2 s
  ArgWalker args("transcribe", argv);
  while (!args.done()) {
    if (args.take("--model", "-m")) {
      model = args.value();
    } else if (args.take("--language")) {
      o.language = args.value();
    } else if (args.take("--task")) {
      const std::string task = args.value();
      if (task != "transcribe" && task != "translate") {
        throw std::invalid_argument("transcribe: --task is '" + task + "'; it takes transcribe or translate");
      }
      o.translate = task == "translate";
    } else if (args.take("--timestamps")) {
      o.timestamps = true;
    } else if (args.take("--max-new-tokens")) {
      o.max_new_tokens = parse_int("--max-new-tokens", args.value(), 1, 1 << 20);
    } else if (args.take("--beams")) {
      o.beams = parse_int("--beams", args.value(), 1, 16);
    } else if (args.take("--weights")) {
      const std::string w = args.value();
      if (w != "f32" && w != "q4") throw std::invalid_argument("transcribe: --weights is '" + w + "'; it takes f32 or q4");
      load.weights = w == "q4" ? WeightFormat::Q4 : WeightFormat::F32;
    } else if (args.take("--json")) {
      json = true;
    } else if (args.take("--profile")) {
      profile = true;
    } else if (args.take("--raw")) {
      raw = true;
    } else if (args.take("--stream")) {
      stream = true;
    } else if (args.take("--step")) {
      stream_options.step = parse_number("--step", args.value(), 0.05, 29);
    } else if (args.take("--idle")) {
      idle = parse_number("--idle", args.value(), 0, 3600);
    } else if (args.current() == "-" || args.current().rfind("-", 0) != 0) {
      files.push_back(args.current());
      args.skip();
    } else {
      args.unknown();
    }
  }
  if (model.empty()) throw std::invalid_argument("transcribe: name the Whisper model folder with --model PATH");
  if (files.empty()) throw std::invalid_argument("transcribe: name the audio file (FILE, or - for stdin)");
  if (std::count(files.begin(), files.end(), "-") > 1) throw std::invalid_argument("transcribe: stdin ('-') named twice");
  if (stream) {
    if (files.size() != 1) throw std::invalid_argument("transcribe: --stream takes one input");
    if (json || o.timestamps || profile) {
      throw std::invalid_argument("transcribe: --stream prints plain text (no --json, --timestamps or --profile)");
    }
    if (files[0] == "-" && !raw) throw std::invalid_argument("transcribe: --stream from stdin takes raw PCM (--raw)");
    if (idle && (files[0] == "-" || !raw)) {
      throw std::invalid_argument("transcribe: --idle is for a raw PCM file that grows (--raw FILE)");
    }
    if (files[0] != "-" && !std::ifstream(files[0], std::ios::binary)) {
      throw std::invalid_argument("transcribe: cannot read " + files[0]);
    }
    const Engine engine = make_engine(global);
    return run_stream(SpeechModel::load(engine, model, load), files[0], raw, o, stream_options, idle.value_or(2));
  }
  if (idle) throw std::invalid_argument("transcribe: --idle goes with --stream");
  // Missing files fail before the model loads; stdin and raw PCM are read now.
  std::map<std::string, std::vector<uint8_t>> bytes;
  for (const std::string& file : files) {
    if (file == "-" || raw) {
      bytes[file] = read_bytes(file);
    } else if (!std::ifstream(file, std::ios::binary)) {
      throw std::invalid_argument("transcribe: cannot read " + file);
    }
  }

  const Engine engine = make_engine(global);
  const SpeechModel m = SpeechModel::load(engine, model, load);
  const SpeechModelInfo info = m.info();
  std::fprintf(stderr, "wgx: %s (Whisper, %lld+%lld layers, %lld mel bins) ready in %.2f s on %s\n", info.path.c_str(),
               static_cast<long long>(info.encoder_layers), static_cast<long long>(info.decoder_layers),
               static_cast<long long>(info.mel_bins), info.load_seconds, info.adapter.c_str());
  const bool terminal = isatty(STDERR_FILENO) != 0;
  o.on_progress = [&](double done, double total) {
    std::fprintf(stderr, "%swgx: %s of %s transcribed%s", terminal ? "\r" : "", clock(done).c_str(),
                 clock(total).c_str(), terminal ? "" : "\n");
  };
  bool failed = false;
  for (const std::string& file : files) {
    Transcript t;
    try {
      t = transcribe_one(m, file, raw, bytes[file], o);
    } catch (const Error& e) {
      // One bad file among several costs only its own text: the others are still transcribed.
      if (files.size() == 1 || e.kind() != ErrorKind::BadArgument) throw;
      std::fprintf(stderr, "%swgx: %s\n", terminal ? "\n" : "", e.what());
      if (json) std::puts(nlohmann::json({{"file", file}, {"error", e.what()}}).dump().c_str());
      failed = true;
      continue;
    }
    if (terminal) std::fputs("\n", stderr);
    std::fprintf(stderr, "wgx: %s%.1f s of audio in %.2f s (real-time factor %.3f), %lld window%s, %lld tokens%s%s\n",
                 files.size() > 1 ? (file + ": ").c_str() : "", t.audio_seconds, t.seconds,
                 t.seconds / std::max(t.audio_seconds, 1e-9), static_cast<long long>(t.windows),
                 t.windows == 1 ? "" : "s", static_cast<long long>(t.tokens), t.language.empty() ? "" : ", language ",
                 t.language.c_str());
    std::fprintf(stderr, "wgx: encoder %.3f s, decoder %.3f s (%.2f ms a token)\n", t.encode_seconds, t.decode_seconds,
                 1000 * t.decode_seconds / static_cast<double>(std::max<int64_t>(t.tokens, 1)));
    if (profile) print_encoder_profile(m);
    print_transcript(t, files.size() > 1 ? file : "", json, o.timestamps);
  }
  return failed ? 2 : 0;
}

}  // namespace wgx::cli
