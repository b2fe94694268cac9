// The layouts of the C API structs that web/wgx.js reads and writes in wasm32 memory. The C API is
// a fixed ABI within a release; these asserts tie the numbers in wgx.js to it.
#include <cstddef>

#include "wgx/wgx.h"

static_assert(sizeof(void*) == 4, "web/wgx.js assumes wasm32");
static_assert(sizeof(wgx_engine_options) == 16 && offsetof(wgx_engine_options, adapter) == 0 &&
              offsetof(wgx_engine_options, toggles) == 4 && offsetof(wgx_engine_options, options) == 8 &&
              offsetof(wgx_engine_options, quiet) == 12);
static_assert(sizeof(wgx_load_options) == 24 && offsetof(wgx_load_options, weights) == 0 &&
              offsetof(wgx_load_options, kv) == 4 && offsetof(wgx_load_options, context) == 8 &&
              offsetof(wgx_load_options, on_progress) == 16 && offsetof(wgx_load_options, user) == 20);
static_assert(sizeof(wgx_session_options) == 8 && offsetof(wgx_session_options, system_prompt) == 0 &&
              offsetof(wgx_session_options, no_thinking) == 4);
static_assert(sizeof(wgx_generate_options) == 56 && offsetof(wgx_generate_options, max_tokens) == 0 &&
              offsetof(wgx_generate_options, temperature) == 8 && offsetof(wgx_generate_options, top_k) == 12 &&
              offsetof(wgx_generate_options, top_p) == 16 && offsetof(wgx_generate_options, min_p) == 20 &&
              offsetof(wgx_generate_options, repetition_penalty) == 24 && offsetof(wgx_generate_options, seed) == 32 &&
              offsetof(wgx_generate_options, has_seed) == 40 && offsetof(wgx_generate_options, stop) == 44 &&
              offsetof(wgx_generate_options, stop_count) == 48 && offsetof(wgx_generate_options, ignore_eos) == 52);
static_assert(sizeof(wgx_result) == 48 && offsetof(wgx_result, prompt_tokens) == 0 &&
              offsetof(wgx_result, generated_tokens) == 8 && offsetof(wgx_result, prefill_tokens_per_second) == 16 &&
              offsetof(wgx_result, decode_tokens_per_second) == 24 && offsetof(wgx_result, seed) == 32 &&
              offsetof(wgx_result, stop_reason) == 40);
