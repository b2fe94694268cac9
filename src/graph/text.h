// Small text helpers for error messages (the toolchain has no std::format).
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace wgx::graph {

// Concatenates anything that streams: str("node ", 3, ": ", msg).
template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// "a, b, c" from anything streamable.
template <typename T>
std::string join(const std::vector<T>& items, const char* sep = ", ") {
  std::ostringstream os;
  for (size_t i = 0; i < items.size(); ++i) os << (i ? sep : "") << items[i];
  return os.str();
}

// open + s + close. (GCC 12 at -O3 warns falsely, -Wrestrict, on `"literal" + std::string&&`;
// appending to a fresh string avoids that pattern.)
inline std::string enclose(const char* open, const std::string& s, const char* close) {
  std::string out = open;
  out += s;
  out += close;
  return out;
}

}  // namespace wgx::graph
