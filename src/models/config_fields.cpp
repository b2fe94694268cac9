#include "models/config_fields.h"

#include <fstream>
#include <sstream>

namespace wgx::models {

nlohmann::json parse_json_text(std::string_view text, const std::string& source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number past a double
    throw ModelError(source, "", std::string("is not valid JSON (") + e.what() + ")");
  }
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path.string(), "", "cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace wgx::models
