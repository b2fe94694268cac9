// The format layer's one error type: everything that rejects a .wgx file (or fails to write one)
// throws FormatError, saying where (section, item, field, byte offset) and what is wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace wgx::format {

struct ErrorSite {
  std::string section;             // "file", "header", "graph", "weights"
  std::string item;                // e.g. "value 12", "node 3 (linear)"; may be empty
  std::string field;               // e.g. "dtype"; may be empty
  std::optional<uint64_t> offset;  // byte offset in the file, where known
};

class FormatError : public std::runtime_error {
 public:
  FormatError(ErrorSite site, std::string detail, std::string path = {});

  const ErrorSite& site() const { return site_; }
  const std::string& detail() const { return detail_; }  // the message without the location
  const std::string& path() const { return path_; }

 private:
  ErrorSite site_;
  std::string detail_;
  std::string path_;
};

}  // namespace wgx::format
