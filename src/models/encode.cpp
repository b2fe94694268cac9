#include "models/encode.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "graph/storage.h"
#include "models/error.h"
#include "models/parallel.h"
#include "ops/quant/quantize.h"

namespace wgx::models {

namespace {

constexpr int64_t kElementsPerThread = int64_t{1} << 20;  // less is not worth a thread

constexpr int64_t kBlockElements = int64_t{1} << 16;   // a block of rows in f32: 256 KiB, in the core's cache

// ops::quantize_q4gsw over blocks of rows on several threads, each block read into a buffer of
// the thread's own just before it is quantized. The layout holds every row's nibbles, then
// every row's scales, so each block's two parts are copied to their places. A row's bytes
// depend on that row alone, so the blocks give the bytes of the whole matrix quantized at once.
std::vector<uint8_t> quantize_rows(const SourceTensor& m, const LoadOptions& options) {
  const graph::QuantParams quant{options.q4_group_size, options.q4_scale_dtype};
  const int64_t rows = m.rows, cols = m.cols;
  const auto layout = graph::q4gsw_layout({rows, cols}, quant);
  if (!layout) {  // throws, naming what is wrong, before reading any weight
    return ops::quantize_q4gsw(nullptr, rows, cols, quant.group_size, quant.scale_dtype);
  }
  std::vector<uint8_t> out(layout->total_bytes);
  const uint64_t row_bytes = layout->cols / 2;
  const uint64_t row_scale_bytes = layout->groups_per_row * graph::element_bytes(quant.scale_dtype);
  const int64_t block = std::max<int64_t>(1, kBlockElements / std::max<int64_t>(cols, 1));
  parallel_ranges(rows, kElementsPerThread / std::max<int64_t>(cols, 1), [&](int64_t begin, int64_t end) {
    std::vector<float> buffer(static_cast<size_t>(std::min(block, end - begin) * cols));
    for (int64_t first = begin; first < end; first += block) {
      const int64_t n = std::min(block, end - first);
      m.read(first, n, buffer.data());
      const std::vector<uint8_t> part =
          ops::quantize_q4gsw(buffer.data(), n, cols, quant.group_size, quant.scale_dtype);
      const auto un = static_cast<uint64_t>(n), ufirst = static_cast<uint64_t>(first);
      std::memcpy(out.data() + ufirst * row_bytes, part.data(), un * row_bytes);
      std::memcpy(out.data() + layout->scales_offset + ufirst * row_scale_bytes, part.data() + un * row_bytes,
                  un * row_scale_bytes);
    }
  });
  return out;
}

}  // namespace

std::vector<float> SourceTensor::values() const {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  parallel_ranges(rows, kElementsPerThread / std::max<int64_t>(cols, 1),
                  [&](int64_t begin, int64_t end) { read(begin, end - begin, out.data() + begin * cols); });
  return out;
}

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
  parallel_ranges(static_cast<int64_t>(values.size()), kElementsPerThread, [&](int64_t begin, int64_t end) {
    for (auto i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i) {
      const uint16_t h = graph::f32_to_f16(values[i]);
      // bf16 reaches far beyond f16's 65504: a weight that overflows would silently become inf.
      if (std::isfinite(values[i]) && !std::isfinite(graph::f16_to_f32(h))) {
        throw ModelError(origin.file, "tensor " + origin.tensor,
                         "element " + std::to_string(i) + " (" + std::to_string(values[i]) + ") overflows f16");
      }
      e.bytes[2 * i] = static_cast<uint8_t>(h & 0xff);
      e.bytes[2 * i + 1] = static_cast<uint8_t>(h >> 8);
    }
  });
  return e;
}

graph::TensorType matrix_type(int64_t rows, int64_t cols, const LoadOptions& options, graph::DType dense_dtype,
                              const Origin& origin) {
  if (options.weights != WeightFormat::Q4) return {dense_dtype, {rows, cols}, {}};
  if (cols % options.q4_group_size != 0) {
    throw ModelError(origin.file, "tensor " + origin.tensor,
                     "has " + std::to_string(cols) + " columns, not a multiple of the q4 group size " +
                         std::to_string(options.q4_group_size) + " (load it as f16 or f32)");
  }
  return {graph::DType::q4gsw, {rows, cols}, {options.q4_group_size, options.q4_scale_dtype}};
}

Encoded encode_matrix(const SourceTensor& matrix, const LoadOptions& options, graph::DType dense_dtype,
                      const Origin& origin) {
  const int64_t rows = matrix.rows, cols = matrix.cols;
  Encoded e;
  e.type = matrix_type(rows, cols, options, dense_dtype, origin);
  if (options.weights != WeightFormat::Q4) return encode_dense(matrix.values(), {rows, cols}, dense_dtype, origin);
  try {
    e.bytes = quantize_rows(matrix, options);
  } catch (const std::invalid_argument& err) {
    throw ModelError(origin.file, "tensor " + origin.tensor, std::string("cannot be quantized: ") + err.what());
  }
  return e;
}

}  // namespace wgx::models
