// Fuzzes the server's request parser, server::parse_request, with a request body: the first byte
// picks the endpoint (even: chat, odd: completions), the rest is the body.
//
// A body the parser refuses must end in an ApiError with status 400 and a code. What it accepts
// must hold settings in the ranges the parser promises, a prompt or messages with known roles,
// and its replies must serialize to JSON that parses back.
#include "fuzz_util.h"
#include "server/openai.h"

namespace {

using namespace wgx;

void check_accepted(const server::CompletionRequest& r) {
  using fuzz::check;
  const Sampling& s = r.sampling;
  check(s.temperature >= 0 && s.temperature <= 2, "temperature in [0, 2]");
  check(s.top_p > 0 && s.top_p <= 1, "top_p in (0, 1]");
  check(s.top_k >= 0, "top_k >= 0");
  check(s.min_p >= 0 && s.min_p <= 1, "min_p in [0, 1]");
  check(s.repetition_penalty > 0 && s.repetition_penalty <= 10, "repetition_penalty in (0, 10]");
  check(!r.max_tokens || *r.max_tokens >= 1, "max_tokens >= 1");
  check(r.stop.size() <= 4, "at most 4 stop strings");
  for (const std::string& stop : r.stop) check(!stop.empty(), "no empty stop string");
  check(!r.include_usage || r.stream, "include_usage only when streaming");
  if (r.endpoint == server::Endpoint::Chat) {
    check(!r.messages.empty(), "a chat has messages");
    for (const Message& m : r.messages) {
      check(m.role == "system" || m.role == "user" || m.role == "assistant", "a known role");
    }
  } else {
    check(r.prompt.has_value() != r.prompt_ids.has_value(), "a prompt, as text or as ids");
    if (r.prompt_ids) {
      for (int32_t id : *r.prompt_ids) check(id >= 0, "token ids >= 0");
    }
  }
  // The replies made for it are JSON that parses back.
  server::ReplyHeader h{"id", 1, "m"};
  const std::string text = r.prompt.value_or(r.messages.empty() ? std::string() : r.messages.back().content);
  const auto reply = server::reply_json(r.endpoint, h, text, StopReason::Eos, {});
  const std::string dumped = reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  check(!nlohmann::json::parse(dumped, nullptr, false).is_discarded(), "the reply parses back");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto endpoint = data[0] % 2 == 0 ? server::Endpoint::Chat : server::Endpoint::Completions;
  const std::string_view body = fuzz::as_text(std::span<const uint8_t>(data + 1, size - 1));
  try {
    check_accepted(server::parse_request(endpoint, body));
  } catch (const server::ApiError& e) {
    fuzz::check(e.status == 400, "a refused request is a 400");
    fuzz::check(!e.code.empty(), "a refused request has a code");
  }
  return 0;
}
