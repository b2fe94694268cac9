// Little-endian encoding (ByteSink) and bounds-checked decoding (Cursor). The Cursor never reads
// past its span and reports every failure as a FormatError naming the section, the item being
// read, the field and the file offset.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/error.h"

namespace wgx::format {

class ByteSink {
 public:
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void i64(int64_t v) { put(static_cast<uint64_t>(v), 8); }
  void f64(double v);
  void str(const std::string& s);
  void raw(const uint8_t* data, size_t size) { bytes_.insert(bytes_.end(), data, data + size); }

  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> bytes_;
};

class Cursor {
 public:
  // `file_offset` is where `bytes` starts in the file, for error messages.
  Cursor(std::span<const uint8_t> bytes, uint64_t file_offset, std::string section)
      : bytes_(bytes), file_offset_(file_offset), section_(std::move(section)) {}

  // Names the item that the following reads belong to ("value 12"), for error messages.
  void set_item(std::string item) { item_ = std::move(item); }

  uint8_t u8(const char* field) { return static_cast<uint8_t>(get(field, 1)); }
  uint32_t u32(const char* field) { return static_cast<uint32_t>(get(field, 4)); }
  uint64_t u64(const char* field) { return get(field, 8); }
  int64_t i64(const char* field) { return static_cast<int64_t>(get(field, 8)); }
  double f64(const char* field);
  bool boolean(const char* field);  // a byte that must be 0 or 1
  std::string str(const char* field);
  // A u32 count of items of at least `min_item_bytes` each, rejected when that many items could
  // not fit in the bytes that remain; so a count can size a reservation safely.
  uint32_t count(const char* field, uint64_t min_item_bytes);
  // A u32 index that must be below `limit`.
  uint32_t index(const char* field, uint64_t limit, const char* what);

  uint64_t remaining() const { return bytes_.size() - pos_; }
  uint64_t pos() const { return pos_; }  // from the start of the span
  uint64_t file_offset() const { return file_offset_ + pos_; }
  // Throws FormatError for the field that starts at the current position, or at `field_start`
  // (a pos() taken before the field was read).
  [[noreturn]] void fail(const char* field, const std::string& message) const;
  [[noreturn]] void fail_at(uint64_t field_start, const char* field,
                            const std::string& message) const;

 private:
  uint64_t get(const char* field, int n);

  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
  uint64_t file_offset_;
  std::string section_;
  std::string item_;
};

}  // namespace wgx::format
