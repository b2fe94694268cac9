#include "format/bytes.h"

#include <cstring>

namespace wgx::format {

void ByteSink::f64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  u64(bits);
}

void ByteSink::str(const std::string& s) {
  u32(static_cast<uint32_t>(s.size()));
  raw(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

void Cursor::fail_at(uint64_t field_start, const char* field, const std::string& message) const {
  throw FormatError({section_, item_, field, file_offset_ + field_start}, message);
}

void Cursor::fail(const char* field, const std::string& message) const {
  fail_at(pos_, field, message);
}

uint64_t Cursor::get(const char* field, int n) {
  if (remaining() < static_cast<uint64_t>(n)) {
    fail(field, "the section ends " + std::to_string(remaining()) + " bytes into a " +
                    std::to_string(n) + "-byte field");
  }
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(bytes_[pos_ + i]) << (8 * i);
  pos_ += static_cast<uint64_t>(n);
  return v;
}

double Cursor::f64(const char* field) {
  const uint64_t bits = get(field, 8);
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

bool Cursor::boolean(const char* field) {
  const uint64_t at = pos_;
  const uint8_t v = u8(field);
  if (v > 1) fail_at(at, field, "a bool byte is " + std::to_string(v) + ", not 0 or 1");
  return v == 1;
}

std::string Cursor::str(const char* field) {
  const uint64_t at = pos_;
  const uint32_t size = u32(field);
  if (size > remaining()) {
    fail_at(at, field,
            "string length " + std::to_string(size) + " exceeds the " +
                std::to_string(remaining()) + " bytes left in the section");
  }
  std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), size);
  pos_ += size;
  return s;
}

uint32_t Cursor::count(const char* field, uint64_t min_item_bytes) {
  const uint64_t at = pos_;
  const uint32_t n = u32(field);
  if (n > remaining() / min_item_bytes) {
    fail_at(at, field,
            "count " + std::to_string(n) + " cannot fit in the " + std::to_string(remaining()) +
                " bytes left in the section");
  }
  return n;
}

uint32_t Cursor::index(const char* field, uint64_t limit, const char* what) {
  const uint64_t at = pos_;
  const uint32_t v = u32(field);
  if (v >= limit) {
    fail_at(at, field,
            std::string(what) + " " + std::to_string(v) + " is out of range (" +
                std::to_string(limit) + " " + what + "s)");
  }
  return v;
}

}  // namespace wgx::format
