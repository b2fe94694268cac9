#include "bench/op_bench.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "graph/storage.h"
#include "runtime/program.h"

namespace wgx::bench {

using graph::DType;
using graph::GraphBuilder;
using graph::Shape;

namespace {

std::vector<uint8_t> random_bytes_for(const graph::TensorType& t, const std::vector<int64_t>& shape,
                                      std::mt19937& rng) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<uint8_t> bytes(n * graph::element_bytes(t.dtype));
  for (uint64_t i = 0; i < n; ++i) {
    if (t.dtype == DType::f32) {
      const float f = dist(rng);
      std::memcpy(bytes.data() + 4 * i, &f, 4);
    } else if (t.dtype == DType::f16) {
      const uint16_t h = graph::f32_to_f16(dist(rng));
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    } else if (t.dtype == DType::i32) {
      const int32_t v = static_cast<int32_t>(rng() % 1000);
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
  }
  return bytes;
}

std::vector<uint8_t> random_f32(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
  std::vector<uint8_t> bytes(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const float f = dist(rng);
    std::memcpy(bytes.data() + 4 * i, &f, 4);
  }
  return bytes;
}

// A model geometry: hidden size, heads, KV heads, head dim, MLP size.
struct Geometry {
  const char* name;
  int64_t hidden, heads, kv_heads, head_dim, ffn;
};
constexpr Geometry kLlama1B{"llama-3.2-1b", 2048, 32, 8, 64, 8192};
constexpr Geometry kQwen06B{"qwen3-0.6b", 1024, 16, 8, 128, 3072};

OpCase linear_case(const Geometry& g, const char* what, int64_t k, int64_t n, int64_t m) {
  OpCase c;
  c.family = "linear";
  c.name = std::string("linear.f32 ") + g.name + " " + what + " M=" + std::to_string(m);
  c.build = [k, n, m](GraphBuilder& b) {
    auto x = b.input("x", DType::f32, {m, k});
    auto w = b.constant("w", DType::f32, {n, k}, random_f32(static_cast<size_t>(n * k), 1));
    b.output("y", b.op1("linear", {x, w}));
  };
  c.bytes = 4.0 * (static_cast<double>(n) * k + static_cast<double>(m) * k + static_cast<double>(m) * n);
  c.flops = 2.0 * static_cast<double>(m) * k * n;
  return c;
}

OpCase add_case(const Geometry& g, int64_t m) {
  OpCase c;
  c.family = "elementwise";
  c.name = std::string("add.f32 ") + g.name + " residual M=" + std::to_string(m);
  const int64_t h = g.hidden;
  c.build = [h, m](GraphBuilder& b) {
    auto x = b.input("x", DType::f32, {m, h});
    auto r = b.input("r", DType::f32, {m, h});
    b.output("y", b.op1("add", {x, r}));
  };
  c.bytes = 12.0 * static_cast<double>(m * h);
  c.flops = static_cast<double>(m * h);
  return c;
}

}  // namespace

std::vector<OpCase> model_cases() {
  std::vector<OpCase> cases;
  for (const Geometry& g : {kLlama1B, kQwen06B}) {
    for (int64_t m : {1, 128, 512}) {
      cases.push_back(add_case(g, m));
      cases.push_back(linear_case(g, "q_proj", g.hidden, g.heads * g.head_dim, m));
      cases.push_back(linear_case(g, "gate_proj", g.hidden, g.ffn, m));
      cases.push_back(linear_case(g, "down_proj", g.ffn, g.hidden, m));
    }
  }
  return cases;
}

OpResult run_case(gpu::Context& ctx, const OpCase& c, int iterations) {
  GraphBuilder b;
  c.build(b);
  const graph::Graph g = b.build();
  runtime::RuntimeOptions options = c.options;
  options["profile"] = "1";
  runtime::Program prog(ctx, g, b.weights(), options);
  for (const auto& [name, value] : c.syms) prog.set_sym(name, value);
  std::mt19937 rng(7);
  for (const graph::NamedValue& in : g.inputs) {
    std::vector<int64_t> shape = graph::max_shape(g.type(in.value).shape, g.syms);
    prog.set_input(in.name, random_bytes_for(g.type(in.value), shape, rng), shape);
  }
  prog.execute();  // warm-up: first-use costs stay out of the numbers
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    prog.execute();
    double us = 0;
    for (const gpu::DispatchTiming& t : prog.last_timings()) us += t.microseconds();
    times.push_back(us);
  }
  std::sort(times.begin(), times.end());
  OpResult r;
  r.name = c.name;
  for (const runtime::RouteChoice& rc : prog.routes()) {
    if (rc.route != "view") r.routes += (r.routes.empty() ? "" : "+") + rc.route;
  }
  r.microseconds = times[times.size() / 2];
  r.dispatches = prog.dispatches_per_execute();
  if (r.microseconds > 0) {
    r.gbps = c.bytes / (r.microseconds * 1e3);
    r.gflops = c.flops / (r.microseconds * 1e3);
  }
  return r;
}

}  // namespace wgx::bench
