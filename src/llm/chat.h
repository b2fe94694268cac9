// Chat prompts for the two model families wgx runs, written out in C++ from the Jinja chat
// templates of their tokenizer_config.json (no template engine): the rendered text is what
// Hugging Face's apply_chat_template gives, and is then encoded with special tokens allowed.
//
//   Qwen3 (ChatML):  <|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n
//                    <|im_start|>assistant\n          + "<think>\n\n</think>\n\n" with thinking off
//   Llama 3:         <|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nU<|eot_id|>
//                    <|start_header_id|>assistant<|end_header_id|>\n\n
//
// Tool definitions and tool calls are not rendered.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace wgx::llm {

enum class ChatTemplate { Qwen3, Llama3 };
const char* chat_template_name(ChatTemplate t);

struct ChatMessage {
  std::string role;  // "system", "user", "assistant" (Qwen3 also "tool")
  std::string content;
  // Qwen3: an assistant turn's thinking, when kept apart from the content. Without it, a
  // "<think>...</think>" inside the content is split off as the template does.
  std::optional<std::string> reasoning_content;
};

struct ChatOptions {
  bool add_generation_prompt = true;  // end with the opening of an assistant turn
  bool enable_thinking = true;        // Qwen3: false pre-fills an empty <think></think> block
};

// The whole conversation as the template renders it. Throws std::invalid_argument for a message
// that is not valid UTF-8 or whose role the template does not know.
std::string render_chat(ChatTemplate t, const std::vector<ChatMessage>& messages, const ChatOptions& options = {});

// Multi-turn chat with a KV cache: the cache already holds the conversation as it was generated,
// so a new turn feeds only the text after it. These give that text.
struct TurnText {
  std::string end_of_turn;        // the token that closes an assistant turn: "<|im_end|>" / "<|eot_id|>"
  std::string after_end_of_turn;  // what the template puts after it: "\n" / ""
};
TurnText turn_text(ChatTemplate t);
// The text of `messages` (new user or system turns) following a conversation whose last assistant
// turn is closed, plus the generation prompt. `first`: the conversation starts here (Llama 3's
// <|begin_of_text|>, a leading system message).
std::string render_turns(ChatTemplate t, const std::vector<ChatMessage>& messages, const ChatOptions& options,
                         bool first);

// The template a tokenizer's vocabulary calls for: <|im_start|> -> Qwen3, <|start_header_id|> ->
// Llama 3; nothing when it has neither.
std::optional<ChatTemplate> detect_chat_template(const tokenizer::Tokenizer& tok);

}  // namespace wgx::llm
