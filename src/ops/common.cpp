#include "ops/common.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "graph/error.h"
#include "runtime/param_arena.h"
#include "runtime/storage.h"

namespace wgx::ops {

using graph::DType;

std::string dtype_label(DType d) {
  switch (d) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::i32: return "i32";
    case DType::boolean: return "bool";
    case DType::u8: return "u8";
    default: return graph::dtype_name(d);
  }
}

std::string variant_source(const shaders::ShaderVariant& variant, std::string_view prelude) {
  // Directives (enable, requires, diagnostic) must come before any declaration: the variant's
  // lines that start with one go first.
  std::string directives, body;
  std::string_view rest = variant.wgsl;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end == std::string_view::npos ? rest.size() : end + 1);
    const bool directive = line.starts_with("enable ") || line.starts_with("requires ") || line.starts_with("diagnostic(");
    (directive ? directives : body) += line;
    rest.remove_prefix(line.size());
  }
  if (!directives.empty() && directives.back() != '\n') directives += '\n';
  return directives + std::string(prelude) + body;
}

const gpu::Kernel& variant_kernel(const runtime::NodeContext& ctx, const shaders::ShaderVariant& variant,
                                  std::vector<gpu::Binding> bindings, std::string_view prelude,
                                  std::vector<std::pair<std::string, double>> constants) {
  gpu::KernelKey key{std::string(variant.template_id), std::string(variant.variant), std::move(constants)};
  return ctx.pipelines().get(key, [&] { return gpu::KernelSource{variant_source(variant, prelude), bindings}; });
}

namespace {
std::string fixed_constant(std::string_view field) {
  std::string name(field);
  for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return name + "_C";
}
}  // namespace

std::string FixedParams::wgsl() const {
  std::string s;
  for (std::string_view f : fields) {
    const std::string c = fixed_constant(f);
    s += "override " + c + ": u32 = 0u;\n";
    s += "fn " + std::string(prefix) + std::string(f) + "() -> u32 { return " + c + "; }\n";
  }
  return s;
}

void FixedParams::constants(std::vector<std::pair<std::string, double>>& out, const std::vector<uint32_t>& values) const {
  if (values.size() != fields.size()) {
    throw graph::GraphError("fixed params: " + std::to_string(values.size()) + " values for " +
                            std::to_string(fields.size()) + " fields");
  }
  for (size_t i = 0; i < fields.size(); ++i) out.emplace_back(fixed_constant(fields[i]), static_cast<double>(values[i]));
}

std::vector<uint32_t> broadcast_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  std::vector<uint32_t> strides(8, 0);
  const size_t r = out.size(), ri = in.size();
  uint64_t stride = 1;
  for (size_t k = 0; k < ri; ++k) {
    const size_t din = ri - 1 - k;  // input dim, from the right
    const size_t dout = r - 1 - k;
    const bool broadcast = in[din] == 1 && out[dout] != 1;
    strides[dout] = broadcast ? 0 : static_cast<uint32_t>(stride);
    stride *= static_cast<uint64_t>(in[din]);
  }
  return strides;
}

uint64_t numel(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

namespace {

// One element of `dtype`'s storage holding `value`, padded to a word.
std::vector<uint8_t> scalar_bytes(const runtime::NodeContext& ctx, double value, DType dtype) {
  const runtime::Storage storage = runtime::storage_for(dtype, ctx.gpu().features().shader_f16);
  if (graph::is_float(dtype)) {
    const float f = static_cast<float>(value);
    return runtime::f32_to_storage({&f, 1}, storage);
  }
  std::vector<uint8_t> bytes(4, 0);
  if (storage == runtime::Storage::I32) {
    const int32_t x = static_cast<int32_t>(value);
    std::memcpy(bytes.data(), &x, 4);
  } else if (dtype == DType::boolean) {
    bytes[0] = value != 0 ? 1 : 0;
  } else {  // u8: the low byte, as PyTorch's cast keeps it
    bytes[0] = static_cast<uint8_t>(static_cast<int64_t>(value));
  }
  return bytes;
}

}  // namespace

InputBinding bind_input(const runtime::NodeContext& ctx, size_t i, DType dtype) {
  const graph::Value& v = ctx.input_value(i);
  InputBinding b;
  b.input = i;
  b.dtype = dtype;
  if (v.kind == graph::ValueKind::Tensor) {
    b.binding = ctx.input(i).binding();
    return b;
  }
  const std::vector<uint8_t> bytes = scalar_bytes(ctx, ctx.scalar_input(i), dtype);
  b.owned = std::make_shared<gpu::Buffer>(ctx.gpu(), bytes.data(), bytes.size(), ctx.label() + " scalar");
  b.binding = {b.owned.get(), 0, 0};
  return b;
}

void InputBinding::refresh(const runtime::NodeContext& ctx) const {
  if (!owned || ctx.input_value(input).kind != graph::ValueKind::Sym) return;
  const std::vector<uint8_t> bytes = scalar_bytes(ctx, ctx.scalar_input(input), dtype);
  ctx.params().upload(*owned, 0, bytes.data(), bytes.size());  // in order with the steps (ParamArena)
}

std::string storage_buffers_guard(const runtime::NodeContext& ctx, uint32_t count) {
  const uint32_t n = ctx.gpu().limits().max_storage_buffers_per_shader_stage;
  if (n >= count) return "";
  return "the device binds " + std::to_string(n) + " storage buffers per shader stage; the kernel takes " +
         std::to_string(count);
}

std::string check_rank_and_size(const runtime::NodeContext& ctx) {
  auto check = [](const std::vector<int64_t>& shape) -> std::string {
    if (shape.size() > 8) return "rank " + std::to_string(shape.size()) + " > 8";
    if (numel(shape) >= (uint64_t{1} << 32)) return "2^32 elements or more";
    return "";
  };
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (ctx.input_value(i).kind != graph::ValueKind::Tensor) continue;
    if (auto e = check(ctx.input_max_shape(i)); !e.empty()) return "input " + std::to_string(i) + ": " + e;
  }
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    if (auto e = check(ctx.output_max_shape(i)); !e.empty()) return "output " + std::to_string(i) + ": " + e;
  }
  return "";
}

InPlaceExec::InPlaceExec(const runtime::NodeContext& ctx, const runtime::InPlace& updates,
                         std::unique_ptr<runtime::NodeExec> dispatch)
    : dispatch_(std::move(dispatch)) {
  for (const runtime::InPlace::Pair& p : updates.pairs()) {
    const runtime::TensorRef& in = ctx.input(p.input);
    const runtime::TensorRef& out = ctx.output(p.output);
    if (in.buffer != out.buffer || in.offset != out.offset) copies_.push_back({in, out});
  }
}

void InPlaceExec::record(gpu::Recorder& rec) {
  for (const auto& [in, out] : copies_) {
    rec.copy(*in.buffer, in.offset, *out.buffer, out.offset, std::min(in.capacity, out.capacity));
  }
  dispatch_->record(rec);
}

gpu::BufferBinding Steps::own(const runtime::NodeContext& ctx, uint64_t bytes, const std::string& what) {
  // At least 16 bytes: a scratch with no slots (nothing to split) is still bound, and its WGSL
  // struct needs a whole element (e.g. 8 bytes of max/sum).
  buffers_.push_back(std::make_unique<gpu::Buffer>(ctx.gpu(), std::max<uint64_t>(bytes, 16), gpu::BufferKind::Storage,
                                                   ctx.label() + " " + what));
  return {buffers_.back().get(), 0, 0};
}

void Steps::resize(const runtime::NodeContext& ctx) {
  for (auto& s : steps_) s->resize(ctx);
}

void Steps::record(gpu::Recorder& rec) {
  for (auto& s : steps_) s->record(rec);
}

std::unique_ptr<runtime::NodeExec> build_viewed(const decltype(runtime::Route::build)& build,
                                                const runtime::NodeContext& ctx, runtime::OperandMap operands) {
  auto map = std::make_shared<const runtime::OperandMap>(std::move(operands));
  std::unique_ptr<runtime::NodeExec> exec = build(runtime::NodeContext(ctx, *map));
  return std::make_unique<ViewedExec>(std::move(map), std::move(exec));
}

std::optional<runtime::Route> first_route(const runtime::NodeContext& view, const std::vector<runtime::Route>& routes,
                                          std::string& why) {
  for (const runtime::Route& r : routes) {
    const std::string no = r.guard(view);
    if (no.empty()) return r;
    why += (why.empty() ? "" : "; ") + r.name + ": " + no;
  }
  return std::nullopt;
}

}  // namespace wgx::ops
