// The models layer's one error type. Everything that rejects a checkpoint (a malformed
// safetensors file, a config.json field, a tensor missing or of the wrong shape) throws
// ModelError, whose message names the file and, where there is one, the tensor or field, so the
// checkpoint can be fixed from the message alone.
#pragma once

#include <stdexcept>
#include <string>

namespace wgx::models {

class ModelError : public std::runtime_error {
 public:
  // what() is "<file>: <item>: <detail>", leaving out the parts that are empty.
  ModelError(std::string file, std::string item, std::string detail)
      : std::runtime_error(compose(file, item, detail)),
        file_(std::move(file)),
        item_(std::move(item)),
        detail_(std::move(detail)) {}

  const std::string& file() const { return file_; }      // the file concerned (or the folder)
  const std::string& item() const { return item_; }      // "tensor <name>" or a config field
  const std::string& detail() const { return detail_; }  // what is wrong

 private:
  static std::string compose(const std::string& file, const std::string& item, const std::string& detail) {
    std::string s = file;
    for (const std::string* part : {&item, &detail}) {
      if (part->empty()) continue;
      if (!s.empty()) s += ": ";
      s += *part;
    }
    return s;
  }

  std::string file_;
  std::string item_;
  std::string detail_;
};

}  // namespace wgx::models
