/* wgx: run Hugging Face language models on the GPU through WebGPU. The C API, for other languages.
 *
 *   wgx_model* model = NULL;
 *   if (wgx_model_load(NULL, "models/demo", NULL, &model) != WGX_OK) {
 *     fprintf(stderr, "%s\n", wgx_last_error());
 *     return 1;
 *   }
 *   wgx_session* session = NULL;
 *   wgx_session_create(model, NULL, &session);
 *   wgx_generate_options options = wgx_generate_options_default();
 *   wgx_session_generate(session, "Once upon a time", &options, print_piece, NULL, NULL);
 *   wgx_session_destroy(session);
 *   wgx_model_destroy(model);
 *
 * Handles are opaque. Every function that can fail returns a wgx_status; on failure
 * wgx_last_error() holds a message for the calling thread (valid until its next wgx call).
 * Strings are UTF-8 and NUL-terminated unless a length is given. Destroy functions accept NULL.
 * A session is used by one thread at a time; wgx_session_cancel may be called from any thread. */
#ifndef WGX_H
#define WGX_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define WGX_C_API __declspec(dllexport)
#else
#define WGX_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum wgx_status {
  WGX_OK = 0,
  WGX_ERROR_BAD_ARGUMENT = 1,  /* a bad value or option: fix the call */
  WGX_ERROR_INVALID_MODEL = 2, /* a model file or folder that cannot be used */
  WGX_ERROR_CONTEXT_FULL = 3,  /* the prompt and the tokens asked for do not fit the context */
  WGX_ERROR_OUT_OF_MEMORY = 4, /* the GPU (or the host) could not allocate */
  WGX_ERROR_DEVICE_LOST = 5,   /* the GPU device is gone: load the model again */
  WGX_ERROR_NO_ADAPTER = 6,    /* no usable GPU adapter was found */
  WGX_ERROR_INTERNAL = 7       /* a bug; the message has the details */
} wgx_status;

typedef struct wgx_engine wgx_engine;
typedef struct wgx_model wgx_model;
typedef struct wgx_session wgx_session;

/* "MAJOR.MINOR.PATCH" */
WGX_C_API const char* wgx_version(void);
/* The message of the calling thread's last failed call ("" when none failed). */
WGX_C_API const char* wgx_last_error(void);
/* "ok", "bad argument", "invalid model", ... */
WGX_C_API const char* wgx_status_name(wgx_status status);

/* ---- Engine: the GPU ---- */
typedef struct wgx_engine_options {
  const char* adapter; /* "auto" (NULL), "gpu", "swiftshader", "gles" */
  const char* toggles; /* Dawn toggles, comma-separated ("-name" turns one off); NULL: none */
  const char* options; /* runtime options "name=value,name=value"; NULL: none */
  int quiet;           /* nonzero: do not say on stderr which adapter "auto" took */
} wgx_engine_options;

/* NULL options: the defaults with WGX_ADAPTER and WGX_TOGGLES applied. */
WGX_C_API wgx_status wgx_engine_create(const wgx_engine_options* options, wgx_engine** out);
WGX_C_API void wgx_engine_destroy(wgx_engine* engine);
/* The adapter's name, valid as long as the engine. */
WGX_C_API const char* wgx_engine_adapter_name(const wgx_engine* engine);

/* ---- Model ---- */
typedef struct wgx_load_options {
  const char* weights; /* "q4", "f16", "f32"; NULL: q4 (or as a .wgx file was converted) */
  const char* kv;      /* "f16", "f32"; NULL: f16 */
  int64_t context;     /* tokens; 0: 4096 (at most the model's max_position_embeddings) */
  /* Called as the load goes on; may be NULL. */
  void (*on_progress)(const char* stage, const char* step, double seconds, void* user);
  void* user;
} wgx_load_options;

/* engine NULL: one made from the environment, owned by the model. options NULL: defaults. */
WGX_C_API wgx_status wgx_model_load(wgx_engine* engine, const char* path, const wgx_load_options* options,
                                    wgx_model** out);
WGX_C_API void wgx_model_destroy(wgx_model* model);

/* A .wgx file whose bytes arrive in order, as from a download: the model is built when the graph
 * section is in, and each weight goes to the GPU as its bytes come (the file is never whole in
 * memory). Write the bytes in any pieces, then finish; destroy the stream in any case. `name`
 * names the file in messages (NULL: "stream"). */
typedef struct wgx_model_stream wgx_model_stream;
WGX_C_API wgx_status wgx_model_stream_begin(wgx_engine* engine, const wgx_load_options* options, const char* name,
                                            wgx_model_stream** out);
WGX_C_API wgx_status wgx_model_stream_write(wgx_model_stream* stream, const void* bytes, size_t size);
/* The file's size as its header says (0 until its first 64 bytes are in). */
WGX_C_API uint64_t wgx_model_stream_size(const wgx_model_stream* stream);
WGX_C_API wgx_status wgx_model_stream_finish(wgx_model_stream* stream, wgx_model** out);
WGX_C_API void wgx_model_stream_destroy(wgx_model_stream* stream);
/* The context length in tokens, and the vocabulary size. */
WGX_C_API int64_t wgx_model_context(const wgx_model* model);
WGX_C_API int64_t wgx_model_vocab_size(const wgx_model* model);
/* "Llama, q4 weights, f16 KV cache, context 4096, <adapter>", valid as long as the model; and the
 * GPU memory it holds, in bytes. */
WGX_C_API const char* wgx_model_description(const wgx_model* model);
WGX_C_API uint64_t wgx_model_memory(const wgx_model* model);

/* Text -> token ids, as Hugging Face's tokenizer(text) (add_special nonzero) or with
 * add_special_tokens=False (0). Writes at most `capacity` ids and sets *count to how many the text
 * has: call with capacity 0 to learn it. */
WGX_C_API wgx_status wgx_tokenize(const wgx_model* model, const char* text, int add_special, int32_t* ids,
                                  size_t capacity, size_t* count);
/* Token ids -> text into `text` (NUL-terminated, at most `capacity` bytes with the NUL); *length
 * is the text's length without it: call with capacity 0 to learn it. */
WGX_C_API wgx_status wgx_detokenize(const wgx_model* model, const int32_t* ids, size_t count, char* text,
                                    size_t capacity, size_t* length);

/* ---- Speech to text (Whisper folders; not in the web build) ---- */
typedef struct wgx_speech_model wgx_speech_model;
typedef struct wgx_transcript wgx_transcript;

typedef struct wgx_transcribe_options {
  const char* language;   /* "en", ...; NULL or "": detected from the first window */
  int translate;          /* nonzero: into English */
  int timestamps;         /* nonzero: segments at the model's timestamps (else one per 30 s window) */
  int64_t max_new_tokens; /* per window; 0: half the decoder's positions */
  int64_t beams;          /* 0 or 1: greedy; 2 to 16: beam search (transformers' num_beams) */
} wgx_transcribe_options;

/* engine NULL: one made from the environment, owned by the model. weights: "f32" (NULL) or "q4". */
WGX_C_API wgx_status wgx_speech_model_load(wgx_engine* engine, const char* path, const char* weights,
                                           wgx_speech_model** out);
WGX_C_API void wgx_speech_model_destroy(wgx_speech_model* model);
/* An audio file (WAV, FLAC, Ogg), or mono 16 kHz samples in [-1, 1]. options NULL: defaults. */
WGX_C_API wgx_status wgx_transcribe_file(wgx_speech_model* model, const char* path, const wgx_transcribe_options* options,
                                         wgx_transcript** out);
WGX_C_API wgx_status wgx_transcribe_samples(wgx_speech_model* model, const float* samples, size_t count,
                                            const wgx_transcribe_options* options, wgx_transcript** out);
/* The text, the language ("" for an English-only model), valid as long as the transcript. */
WGX_C_API const char* wgx_transcript_text(const wgx_transcript* transcript);
WGX_C_API const char* wgx_transcript_language(const wgx_transcript* transcript);
WGX_C_API size_t wgx_transcript_segment_count(const wgx_transcript* transcript);
/* Segment `index`: seconds from the audio's start and its text (valid as long as the transcript). */
WGX_C_API wgx_status wgx_transcript_segment(const wgx_transcript* transcript, size_t index, double* start,
                                            double* end, const char** text);
WGX_C_API void wgx_transcript_destroy(wgx_transcript* transcript);

/* A stream for audio that arrives in pieces (docs/api.md, SpeechStream): a word is final once two
 * hypotheses in a row agree on it. step: seconds of audio between hypotheses; max_buffer: seconds
 * a hypothesis hears at most; 0 for either: the default (1 and 24). options NULL: defaults;
 * timestamps are not streamed. The model must outlive the stream. */
typedef struct wgx_speech_stream wgx_speech_stream;
WGX_C_API wgx_status wgx_speech_stream_begin(wgx_speech_model* model, const wgx_transcribe_options* options,
                                             double step, double max_buffer, wgx_speech_stream** out);
/* Mono 16 kHz samples in [-1, 1] -> *text: the words they made final (often ""), valid until the
 * stream's next call. */
WGX_C_API wgx_status wgx_speech_stream_push(wgx_speech_stream* stream, const float* samples, size_t count,
                                            const char** text);
/* The end of the audio -> *text: the words of what was left. */
WGX_C_API wgx_status wgx_speech_stream_finish(wgx_speech_stream* stream, const char** text);
/* Every final word so far, valid until the stream's next call. */
WGX_C_API const char* wgx_speech_stream_text(const wgx_speech_stream* stream);
WGX_C_API void wgx_speech_stream_destroy(wgx_speech_stream* stream);

/* ---- Session: one conversation ---- */
typedef struct wgx_session_options {
  const char* system_prompt; /* chat: the system message; NULL: none */
  int no_thinking;           /* chat with Qwen3: nonzero answers without thinking first */
} wgx_session_options;

WGX_C_API wgx_status wgx_session_create(wgx_model* model, const wgx_session_options* options, wgx_session** out);
WGX_C_API void wgx_session_destroy(wgx_session* session);
WGX_C_API wgx_status wgx_session_reset(wgx_session* session);
/* Keeps the first `tokens` of the conversation (their cache rows stay): Session::truncate. */
WGX_C_API wgx_status wgx_session_truncate(wgx_session* session, int64_t tokens);
/* Ends the generation running now on another thread after its next token. */
WGX_C_API void wgx_session_cancel(wgx_session* session);
/* Tokens of the context in use. */
WGX_C_API int64_t wgx_session_context_used(const wgx_session* session);

typedef struct wgx_generate_options {
  int64_t max_tokens;
  float temperature; /* 0: greedy */
  int32_t top_k;     /* 0: off */
  float top_p;       /* 1: off */
  float min_p;       /* 0: off */
  float repetition_penalty; /* 1: off */
  uint64_t seed;
  int has_seed;           /* 0: a random seed */
  const char* const* stop; /* stop strings; NULL or stop_count 0: none */
  size_t stop_count;
  int ignore_eos;
} wgx_generate_options;

/* max_tokens 256, temperature 0.8, top_k 40, top_p 0.95, min_p 0.05, no penalty, a random seed. */
WGX_C_API wgx_generate_options wgx_generate_options_default(void);

/* Receives each piece of text as it becomes final (`text` holds `length` bytes, not
 * NUL-terminated, possibly none) with the token that completed it. Return nonzero to stop. */
typedef int (*wgx_token_callback)(const char* text, size_t length, int32_t token, void* user);

typedef struct wgx_result {
  int64_t prompt_tokens;
  int64_t generated_tokens;
  double prefill_tokens_per_second;
  double decode_tokens_per_second;
  uint64_t seed;
  const char* stop_reason; /* "eos", "stop string", "max tokens", "cancelled" */
} wgx_result;

/* Continues the session with `prompt` (text); `result` may be NULL. */
WGX_C_API wgx_status wgx_session_generate(wgx_session* session, const char* prompt, const wgx_generate_options* options,
                                          wgx_token_callback on_token, void* user, wgx_result* result);
/* A user message in the model's chat template, after the conversation so far. */
WGX_C_API wgx_status wgx_session_chat(wgx_session* session, const char* message, const wgx_generate_options* options,
                                      wgx_token_callback on_token, void* user, wgx_result* result);

#ifdef __cplusplus
}
#endif

#endif /* WGX_H */
