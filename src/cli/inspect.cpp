// wgx inspect: loads a .wgx model, builds it for the adapter, and prints every node with its
// shapes and chosen route, the routes it passed over and why, and the memory plan.
#include <algorithm>
#include <cstdio>
#include <string>

#include "api/internal.h"
#include "cli/commands.h"
#include "cli/llm_common.h"
#include "format/wgx_file.h"
#include "runtime/program.h"

namespace wgx::cli {

int run_inspect(const GlobalOptions& global, const std::vector<std::string>& args) {
  std::string path;
  bool why = false;
  for (const std::string& a : args) {
    if (a == "--why") {
      why = true;
    } else if (path.empty() && a.rfind("-", 0) != 0) {
      path = a;
    } else {
      throw std::invalid_argument("inspect: unexpected argument '" + a + "' (usage: wgx inspect MODEL.wgx [--why])");
    }
  }
  if (path.empty()) throw std::invalid_argument("inspect: name a model file (usage: wgx inspect MODEL.wgx [--why])");
  const format::WgxFile file = format::open_wgx(path);
  std::printf("file         %s (format version %u)\n", path.c_str(), file.version());
  for (const auto& [key, value] : file.metadata()) {
    // Whole files ride in metadata (a converted model's tokenizer.json): show their start only.
    constexpr size_t kShown = 80;
    if (value.size() <= kShown && value.find('\n') == std::string::npos) {
      std::printf("meta         %s = %s\n", key.c_str(), value.c_str());
    } else {
      const std::string head = value.substr(0, std::min(kShown, value.find('\n')));
      std::printf("meta         %s = %s... (%zu bytes)\n", key.c_str(), head.c_str(), value.size());
    }
  }
  const Engine engine = make_engine(global);
  gpu::Context& ctx = *Internals::impl(engine).gpu;
  std::printf("adapter      %s (%s)\n", ctx.adapter().device.c_str(), ctx.adapter().backend.c_str());
  runtime::Program program(ctx, file.graph(), file.weights(), Internals::impl(engine).options);
  std::fputs(program.describe().c_str(), stdout);
  if (why) {
    for (const runtime::RouteChoice& r : program.routes()) {
      for (const std::string& rejected : r.rejected) {
        std::printf("node %u (%s) passed over %s\n", r.node, r.op.c_str(), rejected.c_str());
      }
    }
  }
  return 0;
}

}  // namespace wgx::cli
