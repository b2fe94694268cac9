#include "graph/dtype.h"

namespace wgx::graph {

namespace {
struct DTypeInfo {
  DType dtype;
  const char* name;
  uint32_t bytes;
};
constexpr DTypeInfo kInfo[] = {
    {DType::f32, "f32", 4},      {DType::f16, "f16", 2},     {DType::bf16, "bf16", 2},
    {DType::i32, "i32", 4},      {DType::i64, "i64", 8},     {DType::u8, "u8", 1},
    {DType::boolean, "bool", 1}, {DType::q4gsw, "q4gsw", 0},
};

const DTypeInfo* find(DType d) {
  for (const DTypeInfo& info : kInfo) {
    if (info.dtype == d) return &info;
  }
  return nullptr;
}
}  // namespace

const char* dtype_name(DType dtype) {
  const DTypeInfo* info = find(dtype);
  return info ? info->name : "<bad dtype>";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const DTypeInfo& info : kInfo) {
    if (name == info.name) return info.dtype;
  }
  return std::nullopt;
}

std::optional<DType> dtype_from_code(uint8_t code) {
  if (code == 0 || code > kMaxDTypeCode) return std::nullopt;
  return static_cast<DType>(code);
}

uint32_t element_bytes(DType dtype) {
  const DTypeInfo* info = find(dtype);
  return info ? info->bytes : 0;
}

bool is_float(DType dtype) { return kFloatTypes.contains(dtype); }
bool is_integer(DType dtype) { return kIntTypes.contains(dtype); }

std::ostream& operator<<(std::ostream& os, DTypeSet set) {
  bool first = true;
  for (const DTypeInfo& info : kInfo) {
    if (!set.contains(info.dtype)) continue;
    os << (first ? "" : ", ") << info.name;
    first = false;
  }
  return os;
}

}  // namespace wgx::graph
