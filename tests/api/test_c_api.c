/* The C API, from C: the version, errors with their status and message, tokenizing, a streamed
 * greedy generation of the demo model that equals the text its pieces add up to, a callback that
 * stops, and NULL handles. Exits 0 when every check holds; prints each failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wgx/wgx.h"

static int failures = 0;

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "%s:%d: failed: %s (%s)\n", __FILE__, __LINE__, #cond, \
              wgx_last_error());                                            \
      ++failures;                                                           \
    }                                                                       \
  } while (0)

struct text {
  char bytes[4096];
  size_t length;
  int pieces;
  int stop_after; /* pieces; 0: never */
};

static int collect(const char* piece, size_t length, int32_t token, void* user) {
  struct text* t = (struct text*)user;
  (void)token;
  if (t->length + length < sizeof t->bytes) {
    memcpy(t->bytes + t->length, piece, length);
    t->length += length;
    t->bytes[t->length] = '\0';
  }
  ++t->pieces;
  return t->stop_after > 0 && t->pieces >= t->stop_after;
}

int main(void) {
  CHECK(strlen(wgx_version()) >= 5);
  CHECK(strcmp(wgx_status_name(WGX_ERROR_CONTEXT_FULL), "context full") == 0);

  wgx_engine_options eo = {0};
  eo.quiet = 1;
  wgx_engine* engine = NULL;
  eo.adapter = "quantum";
  CHECK(wgx_engine_create(&eo, &engine) == WGX_ERROR_BAD_ARGUMENT && engine == NULL);
  CHECK(strstr(wgx_last_error(), "quantum") != NULL);
  eo.adapter = NULL;
  CHECK(wgx_engine_create(&eo, &engine) == WGX_OK && engine != NULL);
  CHECK(strlen(wgx_engine_adapter_name(engine)) > 0);
  CHECK(strcmp(wgx_last_error(), "") == 0);

  wgx_model* model = NULL;
  CHECK(wgx_model_load(engine, "/nonexistent/model", NULL, &model) == WGX_ERROR_INVALID_MODEL);
  CHECK(model == NULL && strstr(wgx_last_error(), "/nonexistent/model") != NULL);
  wgx_load_options lo = {0};
  lo.weights = "f64";
  CHECK(wgx_model_load(engine, WGX_DEMO_MODEL, &lo, &model) == WGX_ERROR_BAD_ARGUMENT);
  lo.weights = "f32";
  lo.kv = "f32";
  CHECK(wgx_model_load(engine, WGX_DEMO_MODEL, &lo, &model) == WGX_OK && model != NULL);
  if (!model) return 1;
  CHECK(wgx_model_context(model) == 1024);
  CHECK(wgx_model_vocab_size(model) == 2048);

  /* Tokenizing: ask for the count, then fill. */
  size_t count = 0;
  CHECK(wgx_tokenize(model, "Hello, world!", 1, NULL, 0, &count) == WGX_OK && count == 6);
  int32_t ids[16];
  CHECK(wgx_tokenize(model, "Hello, world!", 1, ids, 16, &count) == WGX_OK && count == 6);
  char back[64];
  size_t length = 0;
  CHECK(wgx_detokenize(model, ids, count, back, sizeof back, &length) == WGX_OK);
  CHECK(length == 13 && strcmp(back, "Hello, world!") == 0);
  CHECK(wgx_detokenize(model, ids, count, back, 4, &length) == WGX_OK && length == 13 && strcmp(back, "Hel") == 0);
  CHECK(wgx_tokenize(model, "\xff", 1, ids, 16, &count) == WGX_ERROR_BAD_ARGUMENT);

  wgx_session* session = NULL;
  CHECK(wgx_session_create(model, NULL, &session) == WGX_OK && session != NULL);
  if (!session) return 1;
  wgx_generate_options go = wgx_generate_options_default();
  CHECK(go.max_tokens == 256 && go.top_k == 40);
  go.temperature = 0;
  go.max_tokens = 40;
  struct text t = {{0}, 0, 0, 0};
  wgx_result result;
  CHECK(wgx_session_generate(session, "The meaning of life is", &go, collect, &t, &result) == WGX_OK);
  /* transformers' greedy continuation (tests/models/data/demo/greedy.json) */
  CHECK(strcmp(t.bytes, " the only thing to be\ndesputs of the world.\n        -- John Cage") == 0);
  CHECK(strcmp(result.stop_reason, "eos") == 0);
  CHECK(result.prompt_tokens == 6 && result.generated_tokens == (int64_t)t.pieces);
  CHECK(wgx_session_context_used(session) == 6 + result.generated_tokens);

  /* A callback that returns nonzero stops. */
  CHECK(wgx_session_reset(session) == WGX_OK && wgx_session_context_used(session) == 0);
  struct text s = {{0}, 0, 0, 2};
  CHECK(wgx_session_generate(session, "Love is", &go, collect, &s, &result) == WGX_OK);
  CHECK(strcmp(result.stop_reason, "cancelled") == 0 && s.pieces == 2);

  /* A prompt that does not fit: the status, and the session is as it was. */
  const int64_t used = wgx_session_context_used(session);
  go.max_tokens = 5000;
  CHECK(wgx_session_generate(session, "more", &go, NULL, NULL, NULL) == WGX_ERROR_CONTEXT_FULL);
  CHECK(strstr(wgx_last_error(), "1024") != NULL);
  CHECK(wgx_session_context_used(session) == used);
  /* The demo's tokenizer has ChatML's tokens: a chat turn runs in that template. */
  go.max_tokens = 8;
  CHECK(wgx_session_chat(session, "hi", &go, NULL, NULL, &result) == WGX_OK);
  CHECK(result.prompt_tokens > 4);
  CHECK(wgx_session_generate(NULL, "x", NULL, NULL, NULL, NULL) == WGX_ERROR_BAD_ARGUMENT);

  wgx_session_destroy(session);
  wgx_model_destroy(model);

  /* Speech: the tiny random Whisper on its sample WAV; text and segments, bad input. The text is
   * the file's greedy transcript, which the command-line and speech tests compare with
   * transformers'; here it must equal the samples' transcript. */
  wgx_speech_model* speech = NULL;
  CHECK(wgx_speech_model_load(engine, WGX_TINY_WHISPER, "f16", &speech) == WGX_ERROR_BAD_ARGUMENT && speech == NULL);
  CHECK(wgx_speech_model_load(engine, WGX_DEMO_MODEL, NULL, &speech) == WGX_ERROR_INVALID_MODEL);
  CHECK(wgx_speech_model_load(engine, WGX_TINY_WHISPER, NULL, &speech) == WGX_OK && speech != NULL);
  wgx_transcribe_options to = {0};
  to.language = "en";
  to.max_new_tokens = 6;
  wgx_transcript* tr = NULL;
  CHECK(wgx_transcribe_file(speech, WGX_TINY_WHISPER "/sample.wav", &to, &tr) == WGX_OK && tr != NULL);
  CHECK(strcmp(wgx_transcript_language(tr), "en") == 0);
  CHECK(wgx_transcript_segment_count(tr) == 1);
  double start = -1, end = -1;
  const char* seg = NULL;
  CHECK(wgx_transcript_segment(tr, 0, &start, &end, &seg) == WGX_OK && start == 0 && end > 4.4 && end < 4.6);
  CHECK(seg != NULL && strcmp(seg, wgx_transcript_text(tr)) == 0);
  CHECK(wgx_transcript_segment(tr, 1, &start, &end, &seg) == WGX_ERROR_BAD_ARGUMENT);
  float silence[16000] = {0};
  wgx_transcript* quiet = NULL;
  CHECK(wgx_transcribe_samples(speech, silence, 16000, &to, &quiet) == WGX_OK && quiet != NULL);
  wgx_transcript* none = NULL;
  CHECK(wgx_transcribe_samples(speech, silence, 0, &to, &none) == WGX_ERROR_BAD_ARGUMENT && none == NULL);
  CHECK(wgx_transcribe_file(speech, WGX_DEMO_MODEL "/config.json", &to, &none) == WGX_ERROR_BAD_ARGUMENT);
  CHECK(none == NULL && strstr(wgx_last_error(), "config.json") != NULL);
  /* A stream whose step is longer than its audio: nothing final before finish(), which
   * transcribes it all, as wgx_transcribe_samples does. */
  wgx_speech_stream* stream = NULL;
  const char* piece = NULL;
  CHECK(wgx_speech_stream_begin(speech, &to, 30, 0, &stream) == WGX_ERROR_BAD_ARGUMENT && stream == NULL);
  CHECK(wgx_speech_stream_begin(speech, &to, 5, 0, &stream) == WGX_OK && stream != NULL);
  CHECK(wgx_speech_stream_push(stream, silence, 8000, &piece) == WGX_OK && strcmp(piece, "") == 0);
  CHECK(wgx_speech_stream_push(stream, silence + 8000, 8000, &piece) == WGX_OK && strcmp(piece, "") == 0);
  CHECK(wgx_speech_stream_push(stream, NULL, 1, &piece) == WGX_ERROR_BAD_ARGUMENT);
  CHECK(wgx_speech_stream_finish(stream, &piece) == WGX_OK && strcmp(piece, wgx_transcript_text(quiet)) == 0);
  CHECK(strcmp(wgx_speech_stream_text(stream), wgx_transcript_text(quiet)) == 0);
  CHECK(wgx_speech_stream_push(stream, silence, 1, &piece) == WGX_ERROR_BAD_ARGUMENT);  /* finished */
  wgx_speech_stream_destroy(stream);
  wgx_speech_stream_destroy(NULL);
  /* Beam search: a count out of range is an error that names it; two beams transcribe. */
  to.beams = 17;
  CHECK(wgx_transcribe_samples(speech, silence, 16000, &to, &none) == WGX_ERROR_BAD_ARGUMENT && none == NULL);
  CHECK(strstr(wgx_last_error(), "beams") != NULL);
  to.beams = 2;
  wgx_transcript* beamed = NULL;
  CHECK(wgx_transcribe_samples(speech, silence, 16000, &to, &beamed) == WGX_OK && beamed != NULL);
  wgx_transcript_destroy(beamed);
  to.beams = 0;
  to.language = "xx";
  CHECK(wgx_transcribe_samples(speech, silence, 16000, &to, &none) == WGX_ERROR_BAD_ARGUMENT && none == NULL);
  wgx_transcript_destroy(tr);
  wgx_transcript_destroy(quiet);
  wgx_speech_model_destroy(speech);
  wgx_transcript_destroy(NULL);
  wgx_speech_model_destroy(NULL);
  wgx_engine_destroy(engine);
  wgx_session_destroy(NULL);
  wgx_model_destroy(NULL);
  wgx_engine_destroy(NULL);
  if (failures) fprintf(stderr, "%d checks failed\n", failures);
  return failures ? 1 : 0;
}
