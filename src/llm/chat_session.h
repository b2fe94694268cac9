// A multi-turn conversation over a Generator: each send() feeds only the new user turn (closing
// the previous reply first when it did not end on its end-of-turn token), so the KV cache is
// reused across turns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "llm/chat.h"
#include "llm/generator.h"

namespace wgx::llm {

class ChatSession {
 public:
  // `system_prompt` empty: no system turn. The generator must outlive the session.
  ChatSession(Generator& generator, ChatTemplate chat_template, std::string system_prompt = {},
              ChatOptions options = {});

  // The user's message, then the reply. The template's end-of-turn token is added to the eos ids;
  // max_new_tokens is lowered to what the context has left. Throws ContextFullError when the new
  // turn does not fit (reset() starts over).
  GenerationResult send(std::string_view user_text, GenerationOptions options, const TokenCallback& on_token = {});
  // Starts a new conversation (same system prompt); clears the KV cache.
  void reset();

  // The conversation so far, replies as their emitted text.
  const std::vector<ChatMessage>& history() const { return history_; }
  // The token ids the next send() would feed for `user_text`.
  std::vector<int32_t> next_turn_tokens(std::string_view user_text) const;

 private:
  Generator& generator_;
  ChatTemplate template_;
  std::string system_prompt_;
  ChatOptions options_;
  int32_t end_of_turn_ = -1;
  std::vector<ChatMessage> history_;
};

}  // namespace wgx::llm
