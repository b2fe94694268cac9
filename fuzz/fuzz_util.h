// What the fuzz targets share: cutting one input into the parts a target needs, and a check for
// properties that every accepted input must have (a failed check aborts, which libFuzzer and the
// replay driver both report as a crash with the message).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wgx::fuzz {

inline std::string_view as_text(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The parts of `input` between bytes equal to `separator`, at most `max_parts` of them: the last
// part is the rest of the input, separators and all.
inline std::vector<std::string_view> split(std::string_view input, char separator, size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    const size_t at = input.find(separator);
    if (at == std::string_view::npos) break;
    parts.push_back(input.substr(0, at));
    input.remove_prefix(at + 1);
  }
  parts.push_back(input);
  return parts;
}

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

}  // namespace wgx::fuzz
