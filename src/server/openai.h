// The OpenAI API's requests and answers as wgx serve speaks them: a request body checked field by
// field into a CompletionRequest (every mistake an ApiError naming the field), and the JSON of
// replies, stream chunks and errors. No HTTP and no GPU here.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wgx/wgx.hpp"

namespace wgx::server {

// An error answered to a client: the HTTP status and OpenAI's error object
// {"error": {"message", "type", "param", "code"}}.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status_, std::string code_, const std::string& message, std::string param_ = {},
           std::string type_ = "invalid_request_error")
      : std::runtime_error(message), status(status_), code(std::move(code_)), param(std::move(param_)),
        type(std::move(type_)) {}
  int status;
  std::string code;   // "invalid_value", "context_length_exceeded", ...
  std::string param;  // the request field at fault, "" for none
  std::string type;   // "invalid_request_error", "authentication_error", "rate_limit_error", "server_error"
};
nlohmann::json error_body(const ApiError& e);

enum class Endpoint { Chat, Completions };
const char* endpoint_name(Endpoint e);  // "chat", "completions" (metrics' label)
const char* endpoint_path(Endpoint e);  // "/v1/chat/completions", "/v1/completions"

struct CompletionRequest {
  Endpoint endpoint = Endpoint::Chat;
  std::vector<Message> messages;  // chat
  bool thinking = true;           // chat: chat_template_kwargs.enable_thinking (Qwen3)
  std::optional<std::string> prompt;       // completions: text
  std::optional<std::vector<int32_t>> prompt_ids;  // completions: token ids as given
  std::optional<int64_t> max_tokens;       // unset: what the context has left
  Sampling sampling;                       // the library's defaults where the request is silent
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool ignore_eos = false;     // go on past end-of-sequence tokens (benchmarks; as vLLM's)
};

// Parses and checks a request body. Throws ApiError (400) for malformed JSON, fields of the wrong
// type or out of range, unknown fields, and values wgx does not support (n > 1, tools, ...).
CompletionRequest parse_request(Endpoint endpoint, std::string_view body);

// What a reply is called and whose it is.
struct ReplyHeader {
  std::string id;       // "chatcmpl-..." / "cmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;
};

struct Usage {
  int64_t prompt_tokens = 0;  // the whole prompt, cached tokens included
  int64_t cached_tokens = 0;
  int64_t completion_tokens = 0;
};
nlohmann::json usage_json(const Usage& u);

const char* finish_reason(StopReason reason);  // "stop" or "length"

// The whole reply (stream: false).
nlohmann::json reply_json(Endpoint endpoint, const ReplyHeader& h, const std::string& text, StopReason stop,
                          const Usage& usage);
// A stream chunk: text (for chat, `role` adds the assistant role to the first delta), or the
// last one with its finish reason.
nlohmann::json chunk_json(Endpoint endpoint, const ReplyHeader& h, std::string_view text, bool role,
                          const char* finish = nullptr);
// The chunk after the last one when stream_options.include_usage asks for it.
nlohmann::json usage_chunk_json(Endpoint endpoint, const ReplyHeader& h, const Usage& usage);

}  // namespace wgx::server
