// A node's executable part made of several dispatches run in order (WebGPU orders their storage
// accesses), with the buffers they own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/buffer.h"
#include "runtime/op_kernel.h"

namespace wgx::ops::linalg {

class Steps : public runtime::NodeExec {
 public:
  void add(std::unique_ptr<runtime::NodeExec> step) { steps_.push_back(std::move(step)); }
  // A zeroed device buffer of at least `bytes` (4 or more) that lives as long as this exec.
  gpu::BufferBinding own(const runtime::NodeContext& ctx, uint64_t bytes, const std::string& what);

  void resize(const runtime::NodeContext& ctx) override;
  void record(gpu::Recorder& rec) override;

 private:
  std::vector<std::unique_ptr<runtime::NodeExec>> steps_;
  std::vector<std::unique_ptr<gpu::Buffer>> buffers_;
};

// Packs the f32 values in `from` into output 0 of the node, f16 storage.
std::unique_ptr<runtime::NodeExec> to_f16_step(const runtime::NodeContext& ctx, gpu::BufferBinding from);

}  // namespace wgx::ops::linalg
