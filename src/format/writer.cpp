#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <tuple>

#include "format/bytes.h"
#include "format/layout.h"
#include "format/wgx_file.h"
#include "graph/error.h"
#include "graph/text.h"
#include "graph/validate.h"

namespace wgx::format {

using graph::str;

namespace {

// Where everything goes: the header and graph section bytes, and the constants' bytes at their
// offsets in the weight section (each distinct WeightRef once, in first-use order).
struct Plan {
  struct Piece {
    uint64_t offset;  // in the weight section
    std::span<const uint8_t> data;
  };
  std::vector<uint8_t> head;
  uint64_t weights_offset = 0;
  uint64_t weights_size = 0;
  std::vector<Piece> pieces;
};

Plan plan_file(const graph::Graph& g, const graph::WeightStore& weights, const Metadata& metadata) {
  try {
    graph::validate(g);
  } catch (const graph::GraphError& e) {
    throw FormatError({"graph", "", "", std::nullopt},
                      str("cannot write an invalid graph: ", e.what()));
  }
  Plan plan;
  graph::Graph out = g;
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, uint64_t> placed;
  for (size_t i = 0; i < out.constants.size(); ++i) {
    graph::Constant& c = out.constants[i];
    std::span<const uint8_t> data;
    try {
      data = weights.bytes(c.data);
    } catch (const graph::GraphError& e) {
      throw FormatError({"weights", str("constant ", i, " '", c.name, "'"), "", std::nullopt},
                        e.what());
    }
    auto key = std::make_tuple(c.data.blob, c.data.offset, c.data.bytes);
    auto it = placed.find(key);
    if (it == placed.end()) {
      const uint64_t offset = round_up(plan.weights_size, kTensorAlign);
      plan.pieces.push_back({offset, data});
      plan.weights_size = offset + data.size();
      it = placed.emplace(key, offset).first;
    }
    c.data = {0, it->second, c.data.bytes};
  }
  const std::vector<uint8_t> section = encode_graph(out, metadata);
  plan.weights_offset = round_up(kHeaderSize + section.size(), kWeightSectionAlign);

  ByteSink h;
  h.raw(kMagic, 4);
  h.u32(kVersion);
  h.u32(kHeaderSize);
  h.u32(0);  // flags
  h.u64(kHeaderSize);
  h.u64(section.size());
  h.u64(plan.weights_offset);
  h.u64(plan.weights_size);
  h.u64(plan.weights_offset + plan.weights_size);
  h.u64(0);  // reserved
  plan.head = std::move(h.bytes());
  plan.head.insert(plan.head.end(), section.begin(), section.end());
  return plan;
}

// Calls `emit(data, size)` for every byte of the file, zeros included, in order.
template <typename Emit>
void emit_file(const Plan& plan, Emit&& emit) {
  static const uint8_t zeros[kWeightSectionAlign] = {};
  uint64_t at = 0;
  auto pad_to = [&](uint64_t target) {
    while (at < target) {
      const uint64_t n = std::min<uint64_t>(target - at, sizeof(zeros));
      emit(zeros, n);
      at += n;
    }
  };
  emit(plan.head.data(), plan.head.size());
  at = plan.head.size();
  for (const Plan::Piece& p : plan.pieces) {
    pad_to(plan.weights_offset + p.offset);
    emit(p.data.data(), p.data.size());
    at += p.data.size();
  }
  pad_to(plan.weights_offset + plan.weights_size);
}

[[noreturn]] void io_fail(const std::string& path, const std::string& what) {
  throw FormatError({"file", "", "", std::nullopt}, what + ": " + std::strerror(errno), path);
}

std::string parent_dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::vector<uint8_t> write_wgx_bytes(const graph::Graph& g, const graph::WeightStore& weights,
                                     const Metadata& metadata) {
  const Plan plan = plan_file(g, weights, metadata);
  std::vector<uint8_t> out;
  out.reserve(plan.weights_offset + plan.weights_size);
  emit_file(plan, [&](const uint8_t* data, uint64_t n) { out.insert(out.end(), data, data + n); });
  return out;
}

void write_wgx(const std::string& path, const graph::Graph& g, const graph::WeightStore& weights,
               const Metadata& metadata) {
  const Plan plan = plan_file(g, weights, metadata);
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) io_fail(path, "cannot create a temporary file next to it");
  bool closed = false;
  try {
    emit_file(plan, [&](const uint8_t* data, uint64_t n) {
      while (n > 0) {
        const ssize_t w = ::write(fd, data, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) io_fail(tmp, "cannot write");
        data += w;
        n -= static_cast<uint64_t>(w);
      }
    });
    if (::fchmod(fd, 0644) != 0) io_fail(tmp, "cannot set permissions");
    if (::fsync(fd) != 0) io_fail(tmp, "cannot flush");
    closed = true;
    if (::close(fd) != 0) io_fail(tmp, "cannot close");
  } catch (...) {
    if (!closed) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    errno = err;
    io_fail(path, "cannot rename the temporary file over it");
  }
  // Make the rename itself durable; a failure here leaves a complete file, so it is not an error.
  const int dir = ::open(parent_dir(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace wgx::format
