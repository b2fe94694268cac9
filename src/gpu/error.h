// The GPU layer's one error model: everything that goes wrong below the graph runtime becomes a
// GpuError carrying Dawn's message, the label of the operation that failed and, for WGSL, the
// offending line. Callers catch one type; `kind` says what happened.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace wgx::gpu {

enum class ErrorKind {
  Setup,          // no usable adapter, loader missing, bad option: nothing ran
  Validation,     // WebGPU validation failed (a bug in wgx or a bad request)
  OutOfMemory,    // the device could not allocate
  Internal,       // the implementation failed
  DeviceLost,     // the device is gone; create a new Context
  ShaderCompile,  // WGSL did not compile
  Unknown,
};

const char* to_string(ErrorKind kind);

class GpuError : public std::runtime_error {
 public:
  GpuError(ErrorKind kind, std::string label, std::string message, uint64_t line = 0,
           uint64_t column = 0);

  ErrorKind kind() const { return kind_; }
  // The label of the operation (dispatch, kernel, buffer) that failed; may be empty.
  const std::string& label() const { return label_; }
  // Dawn's own message, unchanged.
  const std::string& message() const { return message_; }
  // For ShaderCompile: 1-based line and column of the first error in the WGSL source.
  uint64_t line() const { return line_; }
  uint64_t column() const { return column_; }

 private:
  ErrorKind kind_;
  std::string label_;
  std::string message_;
  uint64_t line_;
  uint64_t column_;
};

}  // namespace wgx::gpu
