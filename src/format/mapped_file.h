// A read-only memory mapping of a whole file (POSIX mmap).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace wgx::format {

class MappedFile {
 public:
  // Throws FormatError (section "file") when the file cannot be opened, is not a regular file
  // or cannot be mapped. An empty file maps to an empty span.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace wgx::format
