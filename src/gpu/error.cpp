#include "gpu/error.h"

namespace wgx::gpu {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Setup: return "setup error";
    case ErrorKind::Validation: return "validation error";
    case ErrorKind::OutOfMemory: return "out of memory";
    case ErrorKind::Internal: return "internal error";
    case ErrorKind::DeviceLost: return "device lost";
    case ErrorKind::ShaderCompile: return "WGSL compile error";
    case ErrorKind::Unknown: break;
  }
  return "unknown error";
}

namespace {
std::string compose(ErrorKind kind, const std::string& label, const std::string& message,
                    uint64_t line, uint64_t column) {
  std::string s = to_string(kind);
  if (!label.empty()) s += " in '" + label + "'";
  if (line > 0) s += " at line " + std::to_string(line) + ":" + std::to_string(column);
  return s + ": " + message;
}
}  // namespace

GpuError::GpuError(ErrorKind kind, std::string label, std::string message, uint64_t line,
                   uint64_t column)
    : std::runtime_error(compose(kind, label, message, line, column)),
      kind_(kind),
      label_(std::move(label)),
      message_(std::move(message)),
      line_(line),
      column_(column) {}

}  // namespace wgx::gpu
