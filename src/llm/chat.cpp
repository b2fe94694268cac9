#include "llm/chat.h"

#include <stdexcept>

#include "tokenizer/utf8.h"

namespace wgx::llm {

namespace {

void check_utf8(const ChatMessage& m) {
  if (tokenizer::find_invalid_utf8(m.content) || tokenizer::find_invalid_utf8(m.role) ||
      (m.reasoning_content && tokenizer::find_invalid_utf8(*m.reasoning_content))) {
    throw std::invalid_argument("a " + m.role + " message is not valid UTF-8");
  }
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// Python's str.isspace(), which Jinja's trim uses: Unicode White_Space plus the four ASCII
// separators U+001C..U+001F.
bool python_space(char32_t c) { return tokenizer::is_white_space(c) || (c >= 0x1c && c <= 0x1f); }

std::string trim(std::string_view s) {
  size_t begin = 0, end = s.size();
  while (begin < end) {
    const auto cp = tokenizer::code_point_at(s, begin);
    if (!python_space(cp.value)) break;
    begin += cp.length;
  }
  while (end > begin) {
    const auto cp = tokenizer::code_point_before(s, end);
    if (!python_space(cp.value)) break;
    end -= cp.length;
  }
  return std::string(s.substr(begin, end - begin));
}

std::string_view lstrip_newlines(std::string_view s) {
  while (!s.empty() && s.front() == '\n') s.remove_prefix(1);
  return s;
}
std::string_view rstrip_newlines(std::string_view s) {
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return s;
}

// Python's s.split(sep)[0] and s.split(sep)[-1].
std::string_view before_first(std::string_view s, std::string_view sep) { return s.substr(0, s.find(sep)); }
std::string_view after_last(std::string_view s, std::string_view sep) {
  const size_t at = s.rfind(sep);
  return at == std::string_view::npos ? s : s.substr(at + sep.size());
}

bool is_tool_response(std::string_view content) {
  return starts_with(content, "<tool_response>") && ends_with(content, "</tool_response>");
}

std::string render_qwen3(const std::vector<ChatMessage>& messages, const ChatOptions& options) {
  std::string out;
  const size_t n = messages.size();
  if (n > 0 && messages[0].role == "system") out += "<|im_start|>system\n" + messages[0].content + "<|im_end|>\n";
  // The last real user query: assistant turns after it keep their thinking, earlier ones lose it.
  size_t last_query = n - 1;  // wraps for an empty list, as the template's `messages|length - 1`
  for (size_t i = n; i-- > 0;) {
    if (messages[i].role == "user" && !is_tool_response(messages[i].content)) {
      last_query = i;
      break;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user" || (m.role == "system" && i > 0)) {
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    } else if (m.role == "assistant") {
      std::string_view content = m.content;
      std::string_view reasoning;
      if (m.reasoning_content) {
        reasoning = *m.reasoning_content;
      } else if (content.find("</think>") != std::string_view::npos) {
        reasoning = lstrip_newlines(after_last(rstrip_newlines(before_first(content, "</think>")), "<think>"));
        content = lstrip_newlines(after_last(content, "</think>"));
      }
      if (i > last_query && (i + 1 == n || !reasoning.empty())) {
        out += "<|im_start|>assistant\n<think>\n";
        out += lstrip_newlines(rstrip_newlines(reasoning));
        out += "\n</think>\n\n";
        out += lstrip_newlines(content);
      } else {
        out += "<|im_start|>assistant\n";
        out += content;
      }
      out += "<|im_end|>\n";
    } else if (m.role == "tool") {
      // Consecutive tool results share one user turn.
      if (i == 0 || messages[i - 1].role != "tool") out += "<|im_start|>user";
      out += "\n<tool_response>\n" + m.content + "\n</tool_response>";
      if (i + 1 == n || messages[i + 1].role != "tool") out += "<|im_end|>\n";
    } else if (m.role != "system") {
      throw std::invalid_argument("Qwen3's chat template has no role '" + m.role +
                                  "' (use system, user, assistant or tool)");
    }
  }
  if (options.add_generation_prompt) {
    out += "<|im_start|>assistant\n";
    if (!options.enable_thinking) out += "<think>\n\n</think>\n\n";
  }
  return out;
}

std::string render_llama3(const std::vector<ChatMessage>& messages, const ChatOptions& options, bool bos) {
  std::string out;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i == 0 && bos) out += "<|begin_of_text|>";
    out +=
        "<|start_header_id|>" + messages[i].role + "<|end_header_id|>\n\n" + trim(messages[i].content) + "<|eot_id|>";
  }
  if (options.add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

}  // namespace

const char* chat_template_name(ChatTemplate t) { return t == ChatTemplate::Qwen3 ? "qwen3" : "llama3"; }

std::string render_chat(ChatTemplate t, const std::vector<ChatMessage>& messages, const ChatOptions& options) {
  return render_turns(t, messages, options, true);
}

std::string render_turns(ChatTemplate t, const std::vector<ChatMessage>& messages, const ChatOptions& options,
                         bool first) {
  for (const ChatMessage& m : messages) check_utf8(m);
  if (t == ChatTemplate::Llama3) return render_llama3(messages, options, first);
  // Qwen3 renders user and system turns the same wherever they are, so a continuation is the
  // template applied to the new messages alone.
  return render_qwen3(messages, options);
}

TurnText turn_text(ChatTemplate t) {
  if (t == ChatTemplate::Qwen3) return {"<|im_end|>", "\n"};
  return {"<|eot_id|>", ""};
}

std::optional<ChatTemplate> detect_chat_template(const tokenizer::Tokenizer& tok) {
  if (tok.token_to_id("<|im_start|>")) return ChatTemplate::Qwen3;
  if (tok.token_to_id("<|start_header_id|>")) return ChatTemplate::Llama3;
  return std::nullopt;
}

}  // namespace wgx::llm
