#include "runtime/storage.h"

#include <cstring>
#include <stdexcept>

#include "graph/error.h"
#include "graph/storage.h"

namespace wgx::runtime {

using graph::DType;

const char* storage_name(Storage s) {
  switch (s) {
    case Storage::F32: return "f32";
    case Storage::F16Packed: return "f16 (packed in u32)";
    case Storage::F16Native: return "f16";
    case Storage::I32: return "i32";
    case Storage::Bytes: return "bytes (4 per u32)";
    case Storage::Q4: return "q4gsw";
  }
  return "?";
}

Storage storage_for(DType dtype, bool shader_f16) {
  switch (graph::storage_dtype(dtype)) {
    case DType::f32: return Storage::F32;
    case DType::f16: return shader_f16 ? Storage::F16Native : Storage::F16Packed;
    case DType::i32: return Storage::I32;
    case DType::u8:
    case DType::boolean: return Storage::Bytes;
    case DType::q4gsw: return Storage::Q4;
    default: break;
  }
  throw std::invalid_argument(std::string("no device storage for ") + graph::dtype_name(dtype));
}

DType compute_dtype(DType dtype) { return graph::storage_dtype(dtype); }

uint32_t elements_per_word(Storage s) {
  switch (s) {
    case Storage::F16Packed:
    case Storage::F16Native: return 2;
    case Storage::Bytes: return 4;
    default: return 1;
  }
}

uint64_t storage_bytes(Storage s, uint64_t numel) {
  if (s == Storage::Q4) throw std::invalid_argument("q4gsw size depends on the group layout");
  const uint64_t per = elements_per_word(s);
  return (numel + per - 1) / per * 4;
}

bool storage_is_copy(DType src, Storage dst) {
  switch (dst) {
    case Storage::Q4: return true;
    case Storage::F16Packed:
    case Storage::F16Native: return src == DType::f16;
    case Storage::F32: return src == DType::f32;
    case Storage::I32: return src == DType::i32;
    default: return false;
  }
}

std::vector<uint8_t> to_storage(DType src, std::span<const uint8_t> bytes, Storage dst,
                                const std::string& what) {
  if (dst == Storage::Q4) {
    std::vector<uint8_t> out(bytes.begin(), bytes.end());
    out.resize((out.size() + 3) / 4 * 4, 0);
    return out;
  }
  // Float data can land in either float storage; everything else keeps its kind.
  std::vector<uint8_t> converted;
  const bool to_half = dst == Storage::F16Packed || dst == Storage::F16Native;
  if (graph::is_float(src) && (to_half || dst == Storage::F32)) {
    const uint32_t esize = graph::element_bytes(src);
    if (bytes.size() % esize != 0) {
      throw graph::GraphError(what + ": " + std::to_string(bytes.size()) +
                              " bytes is not a whole number of " + graph::dtype_name(src) + " elements");
    }
    const size_t n = bytes.size() / esize;
    converted.resize(n * (to_half ? 2 : 4));
    for (size_t i = 0; i < n; ++i) {
      uint16_t h = 0;
      float f = 0;
      if (src == DType::f32) {
        std::memcpy(&f, bytes.data() + 4 * i, 4);
        h = graph::f32_to_f16(f);
      } else {
        std::memcpy(&h, bytes.data() + 2 * i, 2);
        f = src == DType::f16 ? graph::f16_to_f32(h) : graph::bf16_to_f32(h);
        if (src == DType::bf16) h = graph::f32_to_f16(f);
      }
      if (to_half) {
        std::memcpy(converted.data() + 2 * i, &h, 2);
      } else {
        std::memcpy(converted.data() + 4 * i, &f, 4);
      }
    }
  } else {
    if (storage_for(src, dst == Storage::F16Native) != dst) {
      throw graph::GraphError(what + ": " + graph::dtype_name(src) + " data cannot be stored as " +
                              storage_name(dst));
    }
    converted = graph::convert_for_storage(what, src, bytes);
    if (src == DType::boolean) {
      for (size_t i = 0; i < converted.size(); ++i) {
        if (converted[i] > 1) {
          throw graph::GraphError(what + ": bool element " + std::to_string(i) + " is " +
                                  std::to_string(converted[i]) + ", not 0 or 1");
        }
      }
    }
  }
  converted.resize((converted.size() + 3) / 4 * 4, 0);
  return converted;
}

std::vector<float> storage_to_f32(Storage s, std::span<const uint8_t> bytes, uint64_t numel) {
  if (bytes.size() < storage_bytes(s, numel)) throw std::invalid_argument("too few bytes for the tensor");
  std::vector<float> out(numel);
  const uint8_t* p = bytes.data();
  for (uint64_t i = 0; i < numel; ++i) {
    switch (s) {
      case Storage::F32: std::memcpy(&out[i], p + 4 * i, 4); break;
      case Storage::F16Packed:
      case Storage::F16Native: {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = graph::f16_to_f32(h);
        break;
      }
      case Storage::I32: {
        int32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        out[i] = static_cast<float>(v);
        break;
      }
      case Storage::Bytes: out[i] = static_cast<float>(p[i]); break;
      case Storage::Q4: throw std::invalid_argument("q4gsw is not readable as f32");
    }
  }
  return out;
}

std::vector<uint8_t> f32_to_storage(std::span<const float> values, Storage dst) {
  return to_storage(DType::f32, {reinterpret_cast<const uint8_t*>(values.data()), values.size() * 4},
                    dst, "f32 data");
}

}  // namespace wgx::runtime
