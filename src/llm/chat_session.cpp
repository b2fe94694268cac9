#include "llm/chat_session.h"

#include <algorithm>

namespace wgx::llm {

ChatSession::ChatSession(Generator& generator, ChatTemplate chat_template, std::string system_prompt,
                         ChatOptions options)
    : generator_(generator), template_(chat_template), system_prompt_(std::move(system_prompt)), options_(options) {
  options_.add_generation_prompt = true;
  const std::string eot = turn_text(template_).end_of_turn;
  const auto id = generator_.tokenizer().token_to_id(eot);
  if (!id) {
    throw std::invalid_argument(std::string("the tokenizer has no ") + eot + " token, which the " +
                                chat_template_name(template_) + " chat template needs");
  }
  end_of_turn_ = *id;
}

void ChatSession::reset() {
  generator_.reset();
  history_.clear();
}

std::vector<int32_t> ChatSession::next_turn_tokens(std::string_view user_text) const {
  const bool first = generator_.context().empty();
  std::string text;
  if (!first) {
    // The previous reply's last token is in the context; close the turn unless it did.
    const TurnText tt = turn_text(template_);
    if (generator_.context().back() != end_of_turn_) text += tt.end_of_turn;
    text += tt.after_end_of_turn;
  }
  std::vector<ChatMessage> turn;
  if (first && !system_prompt_.empty()) turn.push_back({"system", system_prompt_, std::nullopt});
  turn.push_back({"user", std::string(user_text), std::nullopt});
  text += render_turns(template_, turn, options_, first);
  // Encoded whole, special tokens allowed, as apply_chat_template(tokenize=True) does.
  return generator_.tokenizer().encode(text);
}

GenerationResult ChatSession::send(std::string_view user_text, GenerationOptions options,
                                   const TokenCallback& on_token) {
  const std::vector<int32_t> ids = next_turn_tokens(user_text);
  const int64_t room = generator_.remaining() - static_cast<int64_t>(ids.size());
  if (room < 1) {
    throw ContextFullError("the conversation fills the context (" + std::to_string(generator_.context().size()) +
                           " of " + std::to_string(generator_.limits().max_seq) + " tokens, " +
                           std::to_string(ids.size()) + " more for this message): reset to start a new conversation");
  }
  options.max_new_tokens = std::min(options.max_new_tokens, room);
  if (std::find(options.eos_ids.begin(), options.eos_ids.end(), end_of_turn_) == options.eos_ids.end()) {
    options.eos_ids.push_back(end_of_turn_);
  }
  if (history_.empty() && !system_prompt_.empty()) history_.push_back({"system", system_prompt_, std::nullopt});
  GenerationResult result = generator_.generate(ids, options, on_token);
  history_.push_back({"user", std::string(user_text), std::nullopt});
  history_.push_back({"assistant", result.text, std::nullopt});
  return result;
}

}  // namespace wgx::llm
