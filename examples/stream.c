/* Streams a continuation of a prompt with wgx's C API.
 *
 *   stream MODEL PROMPT [MAX_TOKENS]        (greedy: the same text every run) */
#include <stdio.h>
#include <stdlib.h>

#include <wgx/wgx.h>

static int print_piece(const char* text, size_t length, int32_t token, void* user) {
  (void)token;
  (void)user;
  fwrite(text, 1, length, stdout);
  fflush(stdout);
  return 0; /* nonzero would stop */
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: stream MODEL PROMPT [MAX_TOKENS]\n");
    return 2;
  }
  printf("wgx %s\n", wgx_version());
  wgx_model* model = NULL;
  wgx_session* session = NULL;
  if (wgx_model_load(NULL, argv[1], NULL, &model) != WGX_OK || wgx_session_create(model, NULL, &session) != WGX_OK) {
    fprintf(stderr, "stream: %s\n", wgx_last_error());
    wgx_model_destroy(model);
    return 1;
  }
  wgx_generate_options options = wgx_generate_options_default();
  options.temperature = 0;
  options.max_tokens = argc > 3 ? atoll(argv[3]) : 64;
  wgx_result result;
  fputs(argv[2], stdout);
  const wgx_status status = wgx_session_generate(session, argv[2], &options, print_piece, NULL, &result);
  if (status == WGX_OK) {
    fprintf(stderr, "\n[%lld tokens, %.1f tok/s, stop: %s]\n", (long long)result.generated_tokens,
            result.decode_tokens_per_second, result.stop_reason);
  } else {
    fprintf(stderr, "\nstream: %s: %s\n", wgx_status_name(status), wgx_last_error());
  }
  wgx_session_destroy(session);
  wgx_model_destroy(model);
  return status == WGX_OK ? 0 : 1;
}
