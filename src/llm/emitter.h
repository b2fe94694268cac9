// One sequence's new tokens as its caller sees them: the text (UTF-8 streamed, special tokens
// left out where asked), stop strings (text that may begin one is held back, so a stop string is
// never shown), the end conditions (an eos, max_new_tokens, a stop string, the callback asking
// to stop) and the result. The generator's decode loops and the batch's steps feed it alike.
#pragma once

#include <optional>

#include "llm/generator.h"
#include "llm/stop_strings.h"

namespace wgx::llm {

class Emitter {
 public:
  // `result` collects the tokens, the text and the stop reason; all four must outlive this.
  Emitter(const std::optional<tokenizer::Tokenizer>& tokenizer, const GenerationOptions& options,
          const TokenCallback& on_token, GenerationResult& result);
  // Takes the next token: appends it, calls on_token with the text that became final. Returns
  // whether the generation goes on; when not, result.stop says why.
  bool accept(int32_t token);

 private:
  const GenerationOptions& options_;
  const TokenCallback& on_token_;
  GenerationResult& result_;
  std::optional<tokenizer::StreamDecoder> stream_;  // no text without a tokenizer
  StopMatcher stops_;
};

}  // namespace wgx::llm
