// OpenAI's chat and completions requests, checked into wgx's settings; their replies in JSON.
#include "server/openai.h"

#include <cmath>
#include <set>

namespace wgx::server {

using nlohmann::json;

namespace {

// Nesting deeper than this is refused before parsing: no request needs it, and it bounds the
// work a hostile body can cause.
constexpr int kMaxDepth = 32;
constexpr size_t kMaxStops = 4;  // as OpenAI

ApiError bad(const std::string& code, const std::string& param, const std::string& message) {
  return ApiError(400, code, message, param);
}

void check_depth(std::string_view body) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) {
        throw bad("invalid_json", "", "the request body nests deeper than " + std::to_string(kMaxDepth) + " levels");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "a number";
  }
}

ApiError wrong_type(const std::string& name, const json& v, const char* want) {
  return bad("invalid_type", name, "'" + name + "' must be " + want + ", not " + type_name(v));
}

bool boolean(const std::string& name, const json& v) {
  if (!v.is_boolean()) throw wrong_type(name, v, "a boolean");
  return v.get<bool>();
}

double number(const std::string& name, const json& v, double min, double max, bool min_open = false) {
  if (!v.is_number()) throw wrong_type(name, v, "a number");
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < min || x > max || (min_open && x == min)) {
    std::string range = (min_open ? "(" : "[") + json(min).dump() + ", " + json(max).dump() + "]";
    throw bad("invalid_value", name, "'" + name + "' is " + v.dump() + "; it must be in " + range);
  }
  return x;
}

int64_t integer(const std::string& name, const json& v, int64_t min, int64_t max) {
  if (!v.is_number_integer()) {
    if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() && std::isfinite(v.get<double>()) &&
        std::fabs(v.get<double>()) < 9e15) {
      return integer(name, json(static_cast<int64_t>(v.get<double>())), min, max);
    }
    throw wrong_type(name, v, "an integer");
  }
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max)) {
    throw bad("invalid_value", name, "'" + name + "' is " + v.dump() + "; it must be at most " + std::to_string(max));
  }
  const int64_t x = v.get<int64_t>();
  if (x < min || x > max) {
    throw bad("invalid_value", name,
              "'" + name + "' is " + v.dump() + "; it must be from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return x;
}

std::string string(const std::string& name, const json& v) {
  if (!v.is_string()) throw wrong_type(name, v, "a string");
  return v.get<std::string>();
}

ApiError unsupported(const std::string& name, const std::string& what) {
  return bad("unsupported_value", name, "'" + name + "': " + what);
}

// A message's content: a string, or an array of {"type": "text", "text": ...} parts.
std::string content_of(const std::string& name, const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return {};
  if (!v.is_array()) throw wrong_type(name, v, "a string or an array of text parts");
  std::string text;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string part = name + "[" + std::to_string(i) + "]";
    const json& p = v[i];
    if (!p.is_object()) throw wrong_type(part, p, "an object");
    const auto type = p.find("type");
    if (type == p.end()) throw bad("missing_parameter", part + ".type", "'" + part + ".type' is missing");
    if (string(part + ".type", *type) != "text") {
      throw unsupported(part + ".type", "only text parts are supported, not '" + type->get<std::string>() + "'");
    }
    for (const auto& [key, value] : p.items()) {
      if (key == "text") text += string(part + ".text", value);
      else if (key != "type") throw bad("unknown_parameter", part + "." + key, "unknown field '" + part + "." + key + "'");
    }
  }
  return text;
}

std::vector<Message> messages_of(const json& v) {
  if (!v.is_array()) throw wrong_type("messages", v, "an array of messages");
  if (v.empty()) throw bad("invalid_value", "messages", "'messages' is empty: a chat needs at least one message");
  std::vector<Message> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string name = "messages[" + std::to_string(i) + "]";
    const json& m = v[i];
    if (!m.is_object()) throw wrong_type(name, m, "an object");
    Message msg;
    bool has_role = false;
    for (const auto& [key, value] : m.items()) {
      const std::string field = name + "." + key;
      if (key == "role") {
        msg.role = string(field, value);
        has_role = true;
      } else if (key == "content") {
        msg.content = content_of(field, value);
      } else if (key == "name") {
        string(field, value);  // accepted; the templates have no place for it
      } else if (key == "tool_calls" || key == "function_call") {
        if (!value.is_null() && !(value.is_array() && value.empty())) throw unsupported(field, "tool calls are not supported");
      } else {
        throw bad("unknown_parameter", field, "unknown field '" + field + "'");
      }
    }
    if (!has_role) throw bad("missing_parameter", name + ".role", "'" + name + ".role' is missing");
    if (msg.role == "developer") msg.role = "system";
    if (msg.role == "tool" || msg.role == "function") {
      throw unsupported(name + ".role", "tool messages are not supported (system, developer, user, assistant)");
    }
    if (msg.role != "system" && msg.role != "user" && msg.role != "assistant") {
      throw bad("invalid_value", name + ".role",
                "'" + name + ".role' is '" + msg.role + "': one of system, developer, user, assistant");
    }
    out.push_back(std::move(msg));
  }
  return out;
}

// The completion prompt: a string, an array of one string, or an array of token ids.
void prompt_of(const json& v, CompletionRequest& r) {
  if (v.is_string()) {
    r.prompt = v.get<std::string>();
    return;
  }
  if (!v.is_array()) throw wrong_type("prompt", v, "a string, or an array of token ids");
  if (v.size() == 1 && v[0].is_string()) {
    r.prompt = v[0].get<std::string>();
    return;
  }
  if (!v.empty() && (v[0].is_string() || v[0].is_array())) {
    throw unsupported("prompt", "one prompt a request (an array of several prompts is not supported)");
  }
  std::vector<int32_t> ids;
  for (size_t i = 0; i < v.size(); ++i) {
    ids.push_back(static_cast<int32_t>(integer("prompt[" + std::to_string(i) + "]", v[i], 0, INT32_MAX)));
  }
  r.prompt_ids = std::move(ids);
}

std::vector<std::string> stop_of(const json& v) {
  std::vector<std::string> out;
  if (v.is_null()) return out;
  if (v.is_string()) {
    out.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    if (v.size() > kMaxStops) {
      throw bad("invalid_value", "stop", "'stop' has " + std::to_string(v.size()) + " strings; at most " +
                                            std::to_string(kMaxStops) + " are allowed");
    }
    for (size_t i = 0; i < v.size(); ++i) out.push_back(string("stop[" + std::to_string(i) + "]", v[i]));
  } else {
    throw wrong_type("stop", v, "a string or an array of strings");
  }
  for (const std::string& s : out) {
    if (s.empty()) throw bad("invalid_value", "stop", "'stop' holds an empty string");
  }
  return out;
}

// A field that wgx accepts only at its default value (what OpenAI does when it is left out).
void default_only(const std::string& key, const json& v) {
  const bool at_default =
      v.is_null() || (v.is_boolean() && !v.get<bool>()) || (v.is_number() && v.get<double>() == 0) ||
      ((v.is_array() || v.is_object()) && v.empty()) || (v.is_string() && (v.get<std::string>().empty() || v == "none"));
  if (key == "n") {
    if (!v.is_null() && integer("n", v, 1, 128) != 1) throw unsupported("n", "one choice a request (n = 1)");
    return;
  }
  if (!at_default) {
    const std::string why = key == "frequency_penalty" || key == "presence_penalty"
                                ? "additive penalties are not supported; use repetition_penalty (> 1 penalizes)"
                                : "is not supported (only its default)";
    throw unsupported(key, why);
  }
}

}  // namespace

json error_body(const ApiError& e) {
  return {{"error",
           {{"message", e.what()},
            {"type", e.type},
            {"param", e.param.empty() ? json(nullptr) : json(e.param)},
            {"code", e.code.empty() ? json(nullptr) : json(e.code)}}}};
}

const char* endpoint_name(Endpoint e) { return e == Endpoint::Chat ? "chat" : "completions"; }
const char* endpoint_path(Endpoint e) { return e == Endpoint::Chat ? "/v1/chat/completions" : "/v1/completions"; }

CompletionRequest parse_request(Endpoint endpoint, std::string_view body) {
  check_depth(body);
  json doc;
  try {
    doc = json::parse(body);
  } catch (const json::exception& e) {  // parse_error; out_of_range for a number like 1e999
    std::string what = e.what();
    const size_t at = what.find("] ");
    throw bad("invalid_json", "", "the request body is not valid JSON: " + (at == std::string::npos ? what : what.substr(at + 2)));
  }
  if (!doc.is_object()) throw bad("invalid_request", "", std::string("the request body must be a JSON object, not ") + type_name(doc));

  CompletionRequest r;
  r.endpoint = endpoint;
  const bool chat = endpoint == Endpoint::Chat;
  bool has_input = false;
  static const std::set<std::string> default_only_fields = {
      "n",         "logprobs",          "top_logprobs",     "frequency_penalty", "presence_penalty", "logit_bias",
      "tools",     "tool_choice",       "functions",        "function_call",     "response_format",  "echo",
      "suffix",    "best_of",           "parallel_tool_calls", "audio",          "modalities",       "prediction",
      "reasoning_effort", "service_tier", "store",          "metadata",          "web_search_options"};
  for (const auto& [key, v] : doc.items()) {
    if (key == "model" || key == "user") {
      if (!v.is_null()) string(key, v);  // any name is taken: the server has one model
    } else if (chat && key == "messages") {
      r.messages = messages_of(v);
      has_input = true;
    } else if (!chat && key == "prompt") {
      prompt_of(v, r);
      has_input = true;
    } else if (key == "max_tokens" || (chat && key == "max_completion_tokens")) {
      if (!v.is_null()) r.max_tokens = integer(key, v, 1, INT32_MAX);
    } else if (key == "temperature") {
      if (!v.is_null()) r.sampling.temperature = static_cast<float>(number(key, v, 0, 2));
    } else if (key == "top_p") {
      if (!v.is_null()) r.sampling.top_p = static_cast<float>(number(key, v, 0, 1, true));
    } else if (key == "top_k") {
      if (!v.is_null()) r.sampling.top_k = static_cast<int32_t>(integer(key, v, 0, INT32_MAX));
    } else if (key == "min_p") {
      if (!v.is_null()) r.sampling.min_p = static_cast<float>(number(key, v, 0, 1));
    } else if (key == "repetition_penalty") {
      if (!v.is_null()) r.sampling.repetition_penalty = static_cast<float>(number(key, v, 0, 10, true));
    } else if (key == "seed") {
      if (!v.is_null()) {
        if (!v.is_number_integer()) throw wrong_type(key, v, "an integer");
        r.sampling.seed = v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(v.get<int64_t>());
      }
    } else if (key == "stop") {
      r.stop = stop_of(v);
    } else if (key == "ignore_eos") {
      if (!v.is_null()) r.ignore_eos = boolean(key, v);
    } else if (key == "stream") {
      if (!v.is_null()) r.stream = boolean(key, v);
    } else if (key == "stream_options") {
      if (v.is_null()) continue;
      if (!v.is_object()) throw wrong_type(key, v, "an object");
      for (const auto& [k, x] : v.items()) {
        if (k == "include_usage") r.include_usage = boolean("stream_options.include_usage", x);
        else if (k != "include_obfuscation") throw bad("unknown_parameter", "stream_options." + k, "unknown field 'stream_options." + k + "'");
      }
    } else if (chat && key == "chat_template_kwargs") {
      if (v.is_null()) continue;
      if (!v.is_object()) throw wrong_type(key, v, "an object");
      for (const auto& [k, x] : v.items()) {
        if (k == "enable_thinking") r.thinking = boolean("chat_template_kwargs.enable_thinking", x);
        else throw bad("unknown_parameter", "chat_template_kwargs." + k, "unknown field 'chat_template_kwargs." + k + "'");
      }
    } else if (default_only_fields.count(key)) {
      default_only(key, v);
    } else {
      throw bad("unknown_parameter", key, "unknown field '" + key + "' in a " + std::string(endpoint_name(endpoint)) + " request");
    }
  }
  if (!has_input) {
    const char* what = chat ? "messages" : "prompt";
    throw bad("missing_parameter", what, std::string("'") + what + "' is missing");
  }
  if (!r.stream && r.include_usage) {
    throw bad("invalid_value", "stream_options", "'stream_options' is only allowed with \"stream\": true");
  }
  return r;
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

const char* finish_reason(StopReason reason) { return reason == StopReason::MaxTokens ? "length" : "stop"; }

namespace {

json head(Endpoint endpoint, const ReplyHeader& h, bool chunk) {
  const char* object = endpoint == Endpoint::Chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  return {{"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model}, {"system_fingerprint", nullptr}};
}

}  // namespace

json reply_json(Endpoint endpoint, const ReplyHeader& h, const std::string& text, StopReason stop, const Usage& usage) {
  json out = head(endpoint, h, false);
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish_reason(stop)}};
  if (endpoint == Endpoint::Chat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  } else {
    choice["text"] = text;
  }
  out["choices"] = json::array({choice});
  out["usage"] = usage_json(usage);
  return out;
}

json chunk_json(Endpoint endpoint, const ReplyHeader& h, std::string_view text, bool role, const char* finish) {
  json out = head(endpoint, h, true);
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish ? json(finish) : json(nullptr)}};
  if (endpoint == Endpoint::Chat) {
    json delta = json::object();
    if (role) delta["role"] = "assistant";
    if (!finish) delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  out["choices"] = json::array({choice});
  return out;
}

json usage_chunk_json(Endpoint endpoint, const ReplyHeader& h, const Usage& usage) {
  json out = head(endpoint, h, true);
  out["choices"] = json::array();
  out["usage"] = usage_json(usage);
  return out;
}

}  // namespace wgx::server
