#include "llm/emitter.h"

#include <algorithm>

namespace wgx::llm {

Emitter::Emitter(const std::optional<tokenizer::Tokenizer>& tokenizer, const GenerationOptions& options,
                 const TokenCallback& on_token, GenerationResult& result)
    : options_(options), on_token_(on_token), result_(result), stops_(options.stop_strings) {
  if (tokenizer) stream_.emplace(*tokenizer, options.skip_special);
}

bool Emitter::accept(int32_t token) {
  result_.tokens.push_back(token);
  const bool eos = std::find(options_.eos_ids.begin(), options_.eos_ids.end(), token) != options_.eos_ids.end();
  const bool last = eos || static_cast<int64_t>(result_.tokens.size()) == options_.max_new_tokens;
  std::string piece = eos || !stream_ ? std::string() : stream_->push(token);  // an eos is not text
  if (last && stream_) piece += stream_->finish();
  std::string text = stops_.push(piece);
  if (last && !stops_.matched()) text += stops_.flush();
  result_.text += text;
  const bool go_on = !on_token_ || on_token_(token, text);
  if (stops_.matched()) {
    result_.stop = StopReason::StopString;
  } else if (eos) {
    result_.stop = StopReason::Eos;
  } else if (last) {
    result_.stop = StopReason::MaxTokens;
  } else if (!go_on) {
    result_.stop = StopReason::Cancelled;
  } else {
    return true;
  }
  return false;
}

}  // namespace wgx::llm
