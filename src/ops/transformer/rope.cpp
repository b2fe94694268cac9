// rope: rotary position embeddings of x [B, S, H, D] at positions input_pos + s. The frequency
// table (with Llama 3.1's scaling when asked) is computed here in double, once per node, and
// uploaded as turns per position in 64-bit fixed point: rope_angles.h says why.
#include <cmath>
#include <memory>
#include <numbers>
#include <string>

#include "ops/common.h"
#include "ops/transformer/kernels.h"
#include "ops/transformer/rope_angles.h"

namespace wgx::ops::transformer {

namespace {

using runtime::DispatchExec;
using runtime::NodeContext;

constexpr size_t kParamWords = 8;

int64_t head_dim(const NodeContext& ctx) { return ctx.input_max_shape(0)[3]; }

std::string variant_name(const NodeContext& ctx) {
  return "rope." + ctx.attr("layout").as_string() + "." + dtype_label(ctx.input(0).dtype);
}

// Frequencies per variant invocation: rotate_half on packed f16 takes two, so that both of its
// output words are whole.
uint32_t freqs_per_invocation(const NodeContext& ctx) {
  const bool packed = runtime::elements_per_word(ctx.output(0).storage) == 2;
  return packed && ctx.attr("layout").as_string() == "rotate_half" ? 2 : 1;
}

// inv_freq[i] = theta^(-2i/D); with scaling "llama3", Llama 3.1's rule: long wavelengths divided
// by `factor`, short ones kept, a smooth blend between.
std::vector<double> inverse_frequencies(const NodeContext& ctx, int64_t dim) {
  const double theta = ctx.attr("theta").as_float();
  const bool llama3 = ctx.attr("scaling").as_string() == "llama3";
  const double factor = ctx.attr("factor").as_float();
  const double low = ctx.attr("low_freq_factor").as_float();
  const double high = ctx.attr("high_freq_factor").as_float();
  const double original = static_cast<double>(ctx.attr("original_max_position").as_int());
  std::vector<double> inv(static_cast<size_t>(dim / 2));
  for (size_t i = 0; i < inv.size(); ++i) {
    double f = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(dim));
    if (llama3) {
      const double wavelen = 2 * std::numbers::pi / f;
      if (wavelen > original / low) {
        f /= factor;
      } else if (wavelen >= original / high) {
        const double smooth = (original / wavelen - low) / (high - low);
        f = (1 - smooth) * f / factor + smooth * f;
      }
    }
    inv[i] = f;
  }
  return inv;
}

std::string guard(const NodeContext& ctx) {
  if (!has_variant(variant_name(ctx))) return "no variant " + variant_name(ctx);
  if (freqs_per_invocation(ctx) == 2 && head_dim(ctx) % 4 != 0) {
    return "rotate_half on packed f16 needs head_dim % 4 == 0, not " + std::to_string(head_dim(ctx));
  }
  return check_rank_and_size(ctx);
}

std::unique_ptr<runtime::NodeExec> build(const NodeContext& ctx) {
  const std::vector<uint32_t> turns = rope_turns(ctx, head_dim(ctx));
  auto table = std::make_shared<gpu::Buffer>(ctx.gpu(), turns.data(), turns.size() * 4, ctx.label() + " turns");
  const gpu::Kernel& kernel =
      family_kernel(ctx, variant_name(ctx),
                    {gpu::Binding::Uniform, gpu::Binding::ReadOnlyStorage, gpu::Binding::ReadOnlyStorage,
                     gpu::Binding::ReadOnlyStorage, gpu::Binding::Storage});
  InputBinding pos = bind_input(ctx, 1, graph::DType::i32);
  const auto half = static_cast<uint32_t>(head_dim(ctx) / 2);
  const uint32_t freqs = freqs_per_invocation(ctx);
  // The table and the input_pos buffer must live as long as the exec: the update keeps them.
  auto update = [pos, table, half, freqs](const NodeContext& c) {
    pos.refresh(c);
    const std::vector<int64_t>& shape = c.input_shape(0);
    const uint64_t rows = static_cast<uint64_t>(shape[0] * shape[1] * shape[2]);
    const uint32_t per_row = half / freqs;
    const uint64_t units = rows * per_row;
    DispatchExec::Launch l;
    l.params = {static_cast<uint32_t>(units), per_row, half, static_cast<uint32_t>(shape[2]),
                static_cast<uint32_t>(shape[1]), 0, 0, 0};
    l.workgroups = (units + kWorkgroupSize - 1) / kWorkgroupSize;
    return l;
  };
  return std::make_unique<DispatchExec>(
      ctx, kernel,
      std::vector<gpu::BufferBinding>{ctx.input(0).binding(), pos.binding, {table.get(), 0, 0}, ctx.output(0).binding()},
      kParamWords, update);
}

}  // namespace

std::vector<uint32_t> rope_turns(const NodeContext& ctx, int64_t dim) {
  // Turns per position (inv_freq / 2pi < 1) as a 64-bit fraction, high word first.
  std::vector<uint32_t> turns;
  for (double f : inverse_frequencies(ctx, dim)) {
    const auto t = static_cast<uint64_t>(std::round(std::ldexp(f / (2 * std::numbers::pi), 64)));
    turns.push_back(static_cast<uint32_t>(t >> 32));
    turns.push_back(static_cast<uint32_t>(t));
  }
  return turns;
}

runtime::OpKernels rope_kernels() { return {"rope", {{"rope", guard, build}}}; }

}  // namespace wgx::ops::transformer
