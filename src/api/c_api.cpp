// The C API (include/wgx/wgx.h) over the C++ one: handles own C++ objects, errors become status
// codes with the message kept per thread.
#include <cstring>
#include <new>
#include <string>

#include "wgx/wgx.h"
#include "wgx/wgx.hpp"

struct wgx_engine {
  wgx::Engine engine;
  std::string adapter_name;
};

struct wgx_model {
  wgx::Model model;
  wgx::Tokenizer tokenizer;  // a model from a file always has one
  std::string description;   // ModelInfo::description, kept for wgx_model_description
};

struct wgx_speech_model {
  wgx::SpeechModel model;
};

struct wgx_transcript {
  wgx::Transcript transcript;
};

struct wgx_speech_stream {
  wgx::SpeechStream stream;
  std::string piece, text;  // the last push's or finish's words; all of them
};

struct wgx_session {
  wgx::Session session;
};

struct wgx_model_stream {
  wgx::ModelStream stream;
};



namespace {

thread_local std::string last_error;

wgx_status status_of(wgx::ErrorKind kind) {
  switch (kind) {
    case wgx::ErrorKind::BadArgument: return WGX_ERROR_BAD_ARGUMENT;
    case wgx::ErrorKind::InvalidModel: return WGX_ERROR_INVALID_MODEL;
    case wgx::ErrorKind::ContextFull: return WGX_ERROR_CONTEXT_FULL;
    case wgx::ErrorKind::OutOfMemory: return WGX_ERROR_OUT_OF_MEMORY;
    case wgx::ErrorKind::DeviceLost: return WGX_ERROR_DEVICE_LOST;
    case wgx::ErrorKind::NoAdapter: return WGX_ERROR_NO_ADAPTER;
    case wgx::ErrorKind::Internal: return WGX_ERROR_INTERNAL;
  }
  return WGX_ERROR_INTERNAL;
}

// Runs `body`; an exception becomes a status and the thread's last error.
template <typename F>
wgx_status guarded(F&& body) {
  try {
    body();
    last_error.clear();
    return WGX_OK;
  } catch (const wgx::Error& e) {
    last_error = e.what();
    return status_of(e.kind());
  } catch (const std::bad_alloc&) {
    last_error = "the host is out of memory";
    return WGX_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    last_error = e.what();
    return WGX_ERROR_INTERNAL;
  } catch (...) {
    last_error = "an unknown error";
    return WGX_ERROR_INTERNAL;
  }
}

void require(bool ok, const char* what) {
  if (!ok) throw wgx::Error(wgx::ErrorKind::BadArgument, what);
}

// "a,b,c" -> {"a", "b", "c"}, empty items left out.
std::vector<std::string> split(const char* csv) {
  std::vector<std::string> out;
  if (!csv) return out;
  std::string_view rest(csv);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    if (std::string_view item = rest.substr(0, comma); !item.empty()) out.emplace_back(item);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return out;
}

wgx::GenerateOptions generate_options(const wgx_generate_options* o) {
  const wgx_generate_options d = o ? *o : wgx_generate_options_default();
  wgx::GenerateOptions g;
  g.max_tokens = d.max_tokens;
  g.sampling.temperature = d.temperature;
  g.sampling.top_k = d.top_k;
  g.sampling.top_p = d.top_p;
  g.sampling.min_p = d.min_p;
  g.sampling.repetition_penalty = d.repetition_penalty;
  if (d.has_seed) g.sampling.seed = d.seed;
  require(d.stop_count == 0 || d.stop, "stop_count is not 0 but stop is NULL");
  for (size_t i = 0; i < d.stop_count; ++i) {
    require(d.stop[i] != nullptr, "a stop string is NULL");
    g.stop.emplace_back(d.stop[i]);
  }
  g.ignore_eos = d.ignore_eos != 0;
  return g;
}

wgx::TokenCallback callback(wgx_token_callback fn, void* user) {
  if (!fn) return {};
  return [fn, user](std::string_view text, int32_t token) { return fn(text.data(), text.size(), token, user) == 0; };
}

void fill(wgx_result* out, const wgx::Result& r) {
  if (!out) return;
  out->prompt_tokens = r.stats.prompt_tokens;
  out->generated_tokens = r.stats.generated_tokens;
  out->prefill_tokens_per_second = r.stats.prefill_tokens_per_second();
  out->decode_tokens_per_second = r.stats.decode_tokens_per_second();
  out->seed = r.seed;
  out->stop_reason = wgx::to_string(r.stop);
}

// The C++ load options of `options` (NULL: the defaults); BadArgument for a bad value.
wgx::LoadOptions load_options(const wgx_load_options* options) {
  wgx::LoadOptions o;
  if (options) {
    if (options->weights) {
      const std::string_view w = options->weights;
      if (w == "q4") {
        o.weights = wgx::WeightFormat::Q4;
      } else if (w == "f16") {
        o.weights = wgx::WeightFormat::F16;
      } else if (w == "f32") {
        o.weights = wgx::WeightFormat::F32;
      } else {
        throw wgx::Error(wgx::ErrorKind::BadArgument, "weights '" + std::string(w) + "': choose q4, f16 or f32");
      }
    }
    if (options->kv) {
      const std::string_view kv = options->kv;
      require(kv == "f16" || kv == "f32", "kv: choose f16 or f32");
      o.kv = kv == "f16" ? wgx::KvFormat::F16 : wgx::KvFormat::F32;
    }
    require(options->context >= 0, "context must not be negative");
    if (options->context > 0) o.context = options->context;
    if (options->on_progress) {
      o.on_progress = [fn = options->on_progress, user = options->user](const wgx::LoadProgress& p) {
        fn(p.stage.c_str(), p.step.c_str(), p.seconds, user);
      };
    }
  }
  return o;
}
wgx::TranscribeOptions transcribe_options(const wgx_transcribe_options* options) {
  wgx::TranscribeOptions o;
  if (!options) return o;
  if (options->language) o.language = options->language;
  o.translate = options->translate != 0;
  o.timestamps = options->timestamps != 0;
  o.max_new_tokens = options->max_new_tokens;
  if (options->beams != 0) o.beams = options->beams;
  return o;
}

}  // namespace

extern "C" {

const char* wgx_version(void) { return wgx::version(); }

const char* wgx_last_error(void) { return last_error.c_str(); }

const char* wgx_status_name(wgx_status status) {
  switch (status) {
    case WGX_OK: return "ok";
    case WGX_ERROR_BAD_ARGUMENT: return wgx::to_string(wgx::ErrorKind::BadArgument);
    case WGX_ERROR_INVALID_MODEL: return wgx::to_string(wgx::ErrorKind::InvalidModel);
    case WGX_ERROR_CONTEXT_FULL: return wgx::to_string(wgx::ErrorKind::ContextFull);
    case WGX_ERROR_OUT_OF_MEMORY: return wgx::to_string(wgx::ErrorKind::OutOfMemory);
    case WGX_ERROR_DEVICE_LOST: return wgx::to_string(wgx::ErrorKind::DeviceLost);
    case WGX_ERROR_NO_ADAPTER: return wgx::to_string(wgx::ErrorKind::NoAdapter);
    case WGX_ERROR_INTERNAL: return wgx::to_string(wgx::ErrorKind::Internal);
  }
  return "unknown status";
}

wgx_status wgx_engine_create(const wgx_engine_options* options, wgx_engine** out) {
  return guarded([&] {
    require(out != nullptr, "wgx_engine_create: out is NULL");
    *out = nullptr;
    wgx::EngineOptions o = wgx::EngineOptions::from_env();
    if (options) {
      if (options->adapter) o.adapter = options->adapter;
      if (options->toggles) o.toggles.emplace_back(options->toggles);
      for (const std::string& kv : split(options->options)) {
        const size_t eq = kv.find('=');
        require(eq != std::string::npos && eq > 0, "runtime options are name=value pairs separated by commas");
        o.options[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      o.announce = options->quiet == 0;
    }
    auto e = std::make_unique<wgx_engine>(wgx_engine{wgx::Engine(o), {}});
    e->adapter_name = e->engine.adapter().name;
    *out = e.release();
  });
}

void wgx_engine_destroy(wgx_engine* engine) { delete engine; }

const char* wgx_engine_adapter_name(const wgx_engine* engine) { return engine ? engine->adapter_name.c_str() : ""; }

wgx_status wgx_model_load(wgx_engine* engine, const char* path, const wgx_load_options* options, wgx_model** out) {
  return guarded([&] {
    require(out != nullptr, "wgx_model_load: out is NULL");
    *out = nullptr;
    require(path != nullptr, "wgx_model_load: path is NULL");
    const wgx::LoadOptions o = load_options(options);
    wgx::Model model = engine ? wgx::Model::load(engine->engine, path, o) : wgx::Model::load(path, o);
    wgx::Tokenizer tokenizer = model.tokenizer();
    *out = new wgx_model{std::move(model), std::move(tokenizer), {}};
    (*out)->description = (*out)->model.info().description;
  });
}


wgx_status wgx_speech_model_load(wgx_engine* engine, const char* path, const char* weights, wgx_speech_model** out) {
  return guarded([&] {
    require(out != nullptr, "wgx_speech_model_load: out is NULL");
    *out = nullptr;
    require(path != nullptr, "wgx_speech_model_load: path is NULL");
    wgx::SpeechLoadOptions o;
    if (weights) {
      const std::string w = weights;
      require(w == "f32" || w == "q4", "weights: choose f32 or q4");
      o.weights = w == "q4" ? wgx::WeightFormat::Q4 : wgx::WeightFormat::F32;
    }
    const wgx::Engine e = engine ? engine->engine : wgx::Engine();
    *out = new wgx_speech_model{wgx::SpeechModel::load(e, path, o)};
  });
}

void wgx_speech_model_destroy(wgx_speech_model* model) { delete model; }


wgx_status wgx_transcribe_file(wgx_speech_model* model, const char* path, const wgx_transcribe_options* options,
                               wgx_transcript** out) {
  return guarded([&] {
    require(out != nullptr, "wgx_transcribe_file: out is NULL");
    *out = nullptr;
    require(model && path, "wgx_transcribe_file: model and path must not be NULL");
    *out = new wgx_transcript{model->model.transcribe_file(path, transcribe_options(options))};
  });
}

wgx_status wgx_transcribe_samples(wgx_speech_model* model, const float* samples, size_t count,
                                  const wgx_transcribe_options* options, wgx_transcript** out) {
  return guarded([&] {
    require(out != nullptr, "wgx_transcribe_samples: out is NULL");
    *out = nullptr;
    require(model != nullptr, "wgx_transcribe_samples: model is NULL");
    require(samples || count == 0, "wgx_transcribe_samples: samples is NULL but count is not 0");
    *out = new wgx_transcript{model->model.transcribe(std::span<const float>(samples, count), transcribe_options(options))};
  });
}

const char* wgx_transcript_text(const wgx_transcript* t) { return t ? t->transcript.text.c_str() : ""; }
const char* wgx_transcript_language(const wgx_transcript* t) { return t ? t->transcript.language.c_str() : ""; }
size_t wgx_transcript_segment_count(const wgx_transcript* t) { return t ? t->transcript.segments.size() : 0; }

wgx_status wgx_transcript_segment(const wgx_transcript* t, size_t index, double* start, double* end, const char** text) {
  return guarded([&] {
    require(t != nullptr, "wgx_transcript_segment: transcript is NULL");
    require(index < t->transcript.segments.size(), "wgx_transcript_segment: index is past the last segment");
    const wgx::TranscriptSegment& s = t->transcript.segments[index];
    if (start) *start = s.start;
    if (end) *end = s.end;
    if (text) *text = s.text.c_str();
  });
}

void wgx_transcript_destroy(wgx_transcript* t) { delete t; }

wgx_status wgx_speech_stream_begin(wgx_speech_model* model, const wgx_transcribe_options* options, double step,
                                   double max_buffer, wgx_speech_stream** out) {
  return guarded([&] {
    require(out != nullptr, "wgx_speech_stream_begin: out is NULL");
    *out = nullptr;
    require(model != nullptr, "wgx_speech_stream_begin: model is NULL");
    wgx::SpeechStreamOptions so;
    if (step != 0) so.step = step;
    if (max_buffer != 0) so.max_buffer = max_buffer;
    *out = new wgx_speech_stream{model->model.stream(transcribe_options(options), so), {}, {}};
  });
}

wgx_status wgx_speech_stream_push(wgx_speech_stream* s, const float* samples, size_t count, const char** text) {
  return guarded([&] {
    require(s != nullptr, "wgx_speech_stream_push: stream is NULL");
    require(samples || count == 0, "wgx_speech_stream_push: samples is NULL but count is not 0");
    s->piece = s->stream.push(std::span<const float>(samples, count));
    s->text = s->stream.text();
    if (text) *text = s->piece.c_str();
  });
}

wgx_status wgx_speech_stream_finish(wgx_speech_stream* s, const char** text) {
  return guarded([&] {
    require(s != nullptr, "wgx_speech_stream_finish: stream is NULL");
    s->piece = s->stream.finish();
    s->text = s->stream.text();
    if (text) *text = s->piece.c_str();
  });
}

const char* wgx_speech_stream_text(const wgx_speech_stream* s) { return s ? s->text.c_str() : ""; }

void wgx_speech_stream_destroy(wgx_speech_stream* s) { delete s; }

wgx_status wgx_model_stream_begin(wgx_engine* engine, const wgx_load_options* options, const char* name,
                                  wgx_model_stream** out) {
  return guarded([&] {
    require(out != nullptr, "wgx_model_stream_begin: out is NULL");
    *out = nullptr;
    require(engine != nullptr, "wgx_model_stream_begin: engine is NULL");
    *out = new wgx_model_stream{wgx::ModelStream(engine->engine, load_options(options), name ? name : "stream")};
  });
}

wgx_status wgx_model_stream_write(wgx_model_stream* stream, const void* bytes, size_t size) {
  return guarded([&] {
    require(stream != nullptr, "wgx_model_stream_write: stream is NULL");
    require(bytes != nullptr || size == 0, "wgx_model_stream_write: bytes is NULL");
    stream->stream.write(bytes, size);
  });
}

uint64_t wgx_model_stream_size(const wgx_model_stream* stream) { return stream ? stream->stream.size() : 0; }

wgx_status wgx_model_stream_finish(wgx_model_stream* stream, wgx_model** out) {
  return guarded([&] {
    require(out != nullptr, "wgx_model_stream_finish: out is NULL");
    *out = nullptr;
    require(stream != nullptr, "wgx_model_stream_finish: stream is NULL");
    wgx::Model model = stream->stream.finish();
    wgx::Tokenizer tokenizer = model.tokenizer();
    *out = new wgx_model{std::move(model), std::move(tokenizer), {}};
    (*out)->description = (*out)->model.info().description;
  });
}

void wgx_model_stream_destroy(wgx_model_stream* stream) { delete stream; }

void wgx_model_destroy(wgx_model* model) { delete model; }

int64_t wgx_model_context(const wgx_model* model) { return model ? model->model.info().context : 0; }
const char* wgx_model_description(const wgx_model* model) { return model ? model->description.c_str() : ""; }
uint64_t wgx_model_memory(const wgx_model* model) { return model ? model->model.info().memory.total : 0; }
int64_t wgx_model_vocab_size(const wgx_model* model) { return model ? model->model.info().vocab_size : 0; }

wgx_status wgx_tokenize(const wgx_model* model, const char* text, int add_special, int32_t* ids, size_t capacity,
                        size_t* count) {
  return guarded([&] {
    require(model && text && count, "wgx_tokenize: model, text and count must not be NULL");
    require(capacity == 0 || ids, "wgx_tokenize: ids is NULL but capacity is not 0");
    wgx::EncodeOptions o;
    o.add_special_tokens = add_special != 0;
    const std::vector<int32_t> out = model->tokenizer.encode(text, o);
    *count = out.size();
    if (capacity > 0) std::memcpy(ids, out.data(), std::min(capacity, out.size()) * sizeof(int32_t));
  });
}

wgx_status wgx_detokenize(const wgx_model* model, const int32_t* ids, size_t count, char* text, size_t capacity,
                          size_t* length) {
  return guarded([&] {
    require(model && length, "wgx_detokenize: model and length must not be NULL");
    require(count == 0 || ids, "wgx_detokenize: ids is NULL but count is not 0");
    require(capacity == 0 || text, "wgx_detokenize: text is NULL but capacity is not 0");
    const std::string out = model->tokenizer.decode(std::span<const int32_t>(ids, count));
    *length = out.size();
    if (capacity > 0) {
      const size_t n = std::min(capacity - 1, out.size());
      std::memcpy(text, out.data(), n);
      text[n] = '\0';
    }
  });
}

wgx_status wgx_session_create(wgx_model* model, const wgx_session_options* options, wgx_session** out) {
  return guarded([&] {
    require(model && out, "wgx_session_create: model and out must not be NULL");
    *out = nullptr;
    wgx::SessionOptions o;
    if (options) {
      if (options->system_prompt) o.system_prompt = options->system_prompt;
      o.thinking = options->no_thinking == 0;
    }
    *out = new wgx_session{model->model.session(o)};
  });
}

void wgx_session_destroy(wgx_session* session) { delete session; }

wgx_status wgx_session_reset(wgx_session* session) {
  return guarded([&] {
    require(session != nullptr, "wgx_session_reset: session is NULL");
    session->session.reset();
  });
}

wgx_status wgx_session_truncate(wgx_session* session, int64_t tokens) {
  return guarded([&] {
    require(session != nullptr, "wgx_session_truncate: session is NULL");
    session->session.truncate(tokens);
  });
}

void wgx_session_cancel(wgx_session* session) {
  if (session) session->session.cancel();
}

int64_t wgx_session_context_used(const wgx_session* session) { return session ? session->session.context_used() : 0; }

wgx_generate_options wgx_generate_options_default(void) {
  const wgx::GenerateOptions g;
  wgx_generate_options o{};
  o.max_tokens = g.max_tokens;
  o.temperature = g.sampling.temperature;
  o.top_k = g.sampling.top_k;
  o.top_p = g.sampling.top_p;
  o.min_p = g.sampling.min_p;
  o.repetition_penalty = g.sampling.repetition_penalty;
  return o;
}

wgx_status wgx_session_generate(wgx_session* session, const char* prompt, const wgx_generate_options* options,
                                wgx_token_callback on_token, void* user, wgx_result* result) {
  return guarded([&] {
    require(session && prompt, "wgx_session_generate: session and prompt must not be NULL");
    fill(result, session->session.generate(std::string_view(prompt), generate_options(options),
                                           callback(on_token, user)));
  });
}

wgx_status wgx_session_chat(wgx_session* session, const char* message, const wgx_generate_options* options,
                            wgx_token_callback on_token, void* user, wgx_result* result) {
  return guarded([&] {
    require(session && message, "wgx_session_chat: session and message must not be NULL");
    fill(result, session->session.chat(std::string_view(message), generate_options(options),
                                       callback(on_token, user)));
  });
}

}  // extern "C"
