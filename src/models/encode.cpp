#include "models/encode.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "graph/storage.h"
#include "models/error.h"
#include "ops/quant/quantize.h"

namespace wgx::models {

Encoded encode_dense(const std::vector<float>& values, std::vector<int64_t> shape, graph::DType dtype,
                     const Origin& origin) {
  Encoded e;
  e.type.dtype = dtype;
  e.type.shape.assign(shape.begin(), shape.end());
  if (dtype == graph::DType::f32) {
    e.bytes.resize(values.size() * 4);
    if (!values.empty()) std::memcpy(e.bytes.data(), values.data(), e.bytes.size());
    return e;
  }
  if (dtype != graph::DType::f16) throw std::logic_error("encode_dense: f32 or f16 only");
  e.bytes.resize(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = graph::f32_to_f16(values[i]);
    // bf16 reaches far beyond f16's 65504: a weight that overflows would silently become inf.
    if (std::isfinite(values[i]) && !std::isfinite(graph::f16_to_f32(h))) {
      throw ModelError(origin.file, "tensor " + origin.tensor,
                       "element " + std::to_string(i) + " (" + std::to_string(values[i]) + ") overflows f16");
    }
    e.bytes[2 * i] = static_cast<uint8_t>(h & 0xff);
    e.bytes[2 * i + 1] = static_cast<uint8_t>(h >> 8);
  }
  return e;
}

Encoded encode_matrix(const std::vector<float>& values, int64_t rows, int64_t cols, const LoadOptions& options,
                      graph::DType dense_dtype, const Origin& origin) {
  if (options.weights != WeightFormat::Q4) return encode_dense(values, {rows, cols}, dense_dtype, origin);
  if (cols % options.q4_group_size != 0) {
    throw ModelError(origin.file, "tensor " + origin.tensor,
                     "has " + std::to_string(cols) + " columns, not a multiple of the q4 group size " +
                         std::to_string(options.q4_group_size) + " (load it as f16 or f32)");
  }
  Encoded e;
  e.type = {graph::DType::q4gsw, {rows, cols}, {options.q4_group_size, options.q4_scale_dtype}};
  try {
    e.bytes = ops::quantize_q4gsw(values.data(), rows, cols, options.q4_group_size, options.q4_scale_dtype);
  } catch (const std::invalid_argument& err) {
    throw ModelError(origin.file, "tensor " + origin.tensor, std::string("cannot be quantized: ") + err.what());
  }
  return e;
}

}  // namespace wgx::models
