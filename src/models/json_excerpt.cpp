#include "models/json_excerpt.h"

namespace wgx::models {

namespace {

constexpr size_t kMaxChars = 200;
constexpr int kMaxDepth = 2;

void append(const nlohmann::json& v, int depth, std::string& out) {
  if (!v.is_structured()) {
    out += v.dump();
    return;
  }
  const bool array = v.is_array();
  if (v.empty() || depth == 0) {
    out += v.empty() ? (array ? "[]" : "{}") : (array ? "[...]" : "{...}");
    return;
  }
  out += array ? '[' : '{';
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (out.size() > kMaxChars) break;  // cut below anyway
    if (!first) out += ',';
    first = false;
    if (!array) out += nlohmann::json(it.key()).dump() + ':';
    append(*it, depth - 1, out);
  }
  out += array ? ']' : '}';
}

}  // namespace

std::string json_excerpt(const nlohmann::json& value) {
  std::string out;
  append(value, kMaxDepth, out);
  if (out.size() > kMaxChars) {
    size_t cut = kMaxChars - 3;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // a whole UTF-8 character
    out.resize(cut);
    out += "...";
  }
  return out;
}

}  // namespace wgx::models
