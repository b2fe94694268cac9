// wgx::Error and the one place where the layers' own error types become it.
#include <new>
#include <stdexcept>

#include "api/internal.h"
#include "format/error.h"
#include "gpu/error.h"
#include "graph/error.h"
#include "models/error.h"
#include "tokenizer/error.h"

namespace wgx {

const char* version() { return WGX_VERSION_STRING; }

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::BadArgument: return "bad argument";
    case ErrorKind::InvalidModel: return "invalid model";
    case ErrorKind::ContextFull: return "context full";
    case ErrorKind::OutOfMemory: return "out of memory";
    case ErrorKind::DeviceLost: return "device lost";
    case ErrorKind::NoAdapter: return "no adapter";
    case ErrorKind::Internal: return "internal error";
  }
  return "error";
}

Error::Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}

namespace {

ErrorKind gpu_kind(gpu::ErrorKind kind) {
  switch (kind) {
    case gpu::ErrorKind::Setup: return ErrorKind::NoAdapter;
    case gpu::ErrorKind::OutOfMemory: return ErrorKind::OutOfMemory;
    case gpu::ErrorKind::DeviceLost: return ErrorKind::DeviceLost;
    default: return ErrorKind::Internal;
  }
}

}  // namespace

void rethrow_as_error(ErrorKind data) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const llm::ContextFullError& e) {
    throw Error(ErrorKind::ContextFull, e.what());
  } catch (const gpu::GpuError& e) {
    const ErrorKind kind = gpu_kind(e.kind());
    std::string message = e.what();
    if (kind == ErrorKind::OutOfMemory) {
      message += " (the GPU is out of memory: a shorter context, q4 weights or an f16 KV cache need less)";
    } else if (kind == ErrorKind::DeviceLost) {
      message += " (the GPU device is gone: load the model again)";
    }
    throw Error(kind, message);
  } catch (const format::FormatError& e) {
    throw Error(data, e.what());
  } catch (const models::ModelError& e) {
    throw Error(data, e.what());
  } catch (const tokenizer::TokenizerError& e) {
    throw Error(data, e.what());
  } catch (const graph::GraphError& e) {
    throw Error(data, e.what());
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::BadArgument, e.what());
  } catch (const std::out_of_range& e) {
    throw Error(ErrorKind::BadArgument, e.what());
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::OutOfMemory, "the host is out of memory");
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Internal, e.what());
  } catch (...) {
    throw Error(ErrorKind::Internal, "an unknown error");
  }
}

}  // namespace wgx
