// Stop strings on streamed text: text is released only once it cannot be the start of a stop
// string, so a stop string is never shown, even when it arrives split over several tokens.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wgx::llm {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);  // empty strings are ignored

  // Takes the next piece of text; returns what is now final. After a stop string shows up, returns
  // the text before it, and matched() is true; later pushes return nothing.
  std::string push(std::string_view text);
  // The text still held (the generation ended without a match).
  std::string flush();
  bool matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool matched_ = false;
};

}  // namespace wgx::llm
