// The audio layer's one error: a file or byte stream that cannot be decoded, or samples that
// cannot be used (NaN, infinite). The message names the input and what is wrong with it.
#pragma once

#include <stdexcept>
#include <string>

namespace wgx::audio {

class AudioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace wgx::audio
