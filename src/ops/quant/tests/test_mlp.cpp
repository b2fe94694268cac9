// linear_swiglu_linear and add_rms_norm_linear_swiglu_linear (mlp.cpp). At one row the
// q4_gemv_q8 route hands act from the gate/up product to the down product in int8 (runs of 16
// values, a step each); otherwise linear_swiglu+linear runs the two ops' own routes. act is
// checked against the double reference of the gate/up product (x rounded to int8 per 32 by the
// one-row kernel and by q4_gemm), out against act as the GPU wrote it times the dequantized down
// weight, with the rounding of act to int8 (per 16 at one row) in the bound. Negative controls: the bound
// rejects out computed from act with the two values of each pair swapped or with a run's
// values moved to the neighbouring run (what a wrong word or step order in the handover
// gives), and with quant_gemv_x8 off no q8 kernel runs.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>

#include "quant_program.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using testing::Data;
using testing::Products;
using testing::Reference;

struct MlpSpec {
  std::string name;
  int64_t m = 1, k = 64, i = 32, out = 64;  // rows of x, its width, act's width, out's width
  bool norm = false;
  const char* route = "";
  double eps = 1e-5;
};

class Mlps {
 public:
  // `apart`: as two nodes, the gate/up op's and linear (the same outputs).
  void add(graph::GraphBuilder& b, const MlpSpec& s, bool apart = false) {
    Node n{s, testing::q4_weight(2 * s.i, s.k, 32, DType::f32, seed_++),
           testing::q4_weight(s.out, s.i, 32, DType::f32, seed_++), {}, {}, {}, b.graph().nodes.size()};
    std::vector<graph::ValueId> in{b.input(s.name, DType::f32, {s.m, s.k})};
    graph::Attrs attrs;
    if (s.norm) {
      n.norm_w = testing::random_floats(static_cast<size_t>(s.k), seed_++, 0.5f, 1.5f);
      in.push_back(b.input(s.name + ".res", DType::f32, {s.m, s.k}));
      in.push_back(b.constant(s.name + ".nw", DType::f32, {s.k}, testing::bytes_of(n.norm_w)));
      attrs.insert_or_assign("eps", s.eps);
    }
    in.push_back(b.constant(s.name + ".wgu", graph::TensorType{DType::q4gsw, {2 * s.i, s.k}, {32, DType::f32}},
                            n.gate_up.bytes));
    in.push_back(b.constant(s.name + ".wd", graph::TensorType{DType::q4gsw, {s.out, s.i}, {32, DType::f32}},
                            n.down.bytes));
    std::vector<graph::ValueId> outs;
    if (apart) {
      const graph::ValueId wd = in.back();
      in.pop_back();
      outs = b.op(std::string(s.norm ? "add_rms_norm_" : "") + "linear_swiglu", in, attrs);
      const graph::ValueId y = b.op1("linear", {outs[0], wd});
      outs = s.norm ? std::vector<graph::ValueId>{outs[0], y, outs[1]} : std::vector<graph::ValueId>{outs[0], y};
    } else {
      outs = b.op(std::string(s.norm ? "add_rms_norm_" : "") + "linear_swiglu_linear", in, attrs);
    }
    b.output(s.name + ".act", outs[0]);
    b.output(s.name + ".y", outs[1]);
    if (s.norm) b.output(s.name + ".sum", outs[2]);
    nodes_[s.name] = std::move(n);
  }

  void set(Program& prog, const std::string& name) {
    Node& n = nodes_.at(name);
    const size_t count = static_cast<size_t>(n.spec.m * n.spec.k);
    n.x = testing::random_floats(count, seed_++, -1.f, 1.f);
    prog.set_input(name, std::span<const float>(n.x), {n.spec.m, n.spec.k});
    if (n.spec.norm) {
      n.res = testing::random_floats(count, seed_++, -1.f, 1.f);
      prog.set_input(name + ".res", std::span<const float>(n.res), {n.spec.m, n.spec.k});
    }
  }

  // The gate/up product's x: x, or rms_norm(x + residual) * norm_weight (f32 sum, double norm).
  std::vector<float> product_x(const std::string& name) const {
    const Node& n = nodes_.at(name);
    if (!n.spec.norm) return n.x;
    std::vector<float> out(n.x.size());
    for (int64_t r = 0; r < n.spec.m; ++r) {
      double squares = 0;
      for (int64_t j = 0; j < n.spec.k; ++j) {
        const float v = n.x[r * n.spec.k + j] + n.res[r * n.spec.k + j];
        squares += double(v) * v;
      }
      const double scale = 1 / std::sqrt(squares / static_cast<double>(n.spec.k) + n.spec.eps);
      for (int64_t j = 0; j < n.spec.k; ++j) {
        const size_t e = static_cast<size_t>(r * n.spec.k + j);
        out[e] = static_cast<float>((n.x[e] + n.res[e]) * scale * n.norm_w[static_cast<size_t>(j)]);
      }
    }
    return out;
  }

  // Whether the products round their x to int8: at one row (the gate/up kernel x per 32, the
  // down kernel act per 16) and above four (q4_gemm, per 32); at two to four rows the one-row
  // kernel's four-row form reads f32 x.
  static bool rounds_x(const MlpSpec& s) { return s.m == 1 || s.m > 4; }

  // out's reference from `act` (act as the GPU wrote it, or a corrupted copy): its products
  // with the down weight, and act's rounding to int8 (per 16 at one row) in the bound.
  Reference down_reference(const std::string& name, const std::vector<float>& act) const {
    const Node& n = nodes_.at(name);
    Reference r = testing::linear_dots(act, n.spec.m, n.spec.i, n.down.values, n.spec.out, {});
    if (rounds_x(n.spec)) {
      Products::add_x8_error(r, act, n.spec.m, n.spec.i, n.down.values, n.spec.i + 3, n.spec.m == 1 ? 16 : 32);
    }
    return r;
  }

  // `route`: also check that the node took its spec's route.
  void verify(const Program& prog, const std::string& name, bool route = true) const {
    SCOPED_TRACE(name);
    const Node& n = nodes_.at(name);
    const MlpSpec& s = n.spec;
    const std::vector<float> x = product_x(name);
    const int64_t norm_terms = s.norm ? s.k + 8 : 0;
    if (s.norm) {
      std::vector<float> sum(n.x.size());
      for (size_t e = 0; e < sum.size(); ++e) sum[e] = n.x[e] + n.res[e];
      EXPECT_EQ(prog.read_f32(name + ".sum"), sum) << "sum";  // one f32 addition: exact
    }
    // act: the gate/up product (x rounded to int8 per 32 by the one-row kernel: K <= 4096).
    Reference all = testing::linear_dots(x, s.m, s.k, n.gate_up.values, 2 * s.i, {});
    if (rounds_x(s)) Products::add_x8_error(all, x, s.m, s.k, n.gate_up.values, s.k + norm_terms + 3);
    const Reference act_want = testing::swiglu_reference(all, s.m, 2 * s.i);
    const std::vector<float> act = prog.read_f32(name + ".act");
    EXPECT_EQ(prog.output_shape(name + ".act"), (std::vector<int64_t>{s.m, s.i}));
    EXPECT_TRUE(testing::within_bound(act, act_want, s.k + norm_terms, false)) << "act";
    EXPECT_EQ(prog.output_shape(name + ".y"), (std::vector<int64_t>{s.m, s.out}));
    EXPECT_TRUE(testing::within_bound(prog.read_f32(name + ".y"), down_reference(name, act), s.i, false)) << "out";
    const RouteChoice& choice = prog.routes().at(n.index);
    if (route) {
      EXPECT_EQ(choice.route, s.route) << testing::rejected(choice);
    }
  }

 private:
  struct Node {
    MlpSpec spec;
    Data gate_up, down;
    std::vector<float> norm_w, x, res;
    size_t index;
  };
  std::map<std::string, Node> nodes_;
  uint32_t seed_ = 7;
};

// One row (the int8 handover) at lanes per column group of 2 to 32 for the gate/up product
// (K = 64 .. 1024; 2,048 has 64, which the route halves to 32), act 32 to 256 wide, with and
// without the norm prologue; four and six rows through the two ops' routes.
const std::vector<MlpSpec>& specs() {
  static const std::vector<MlpSpec> s{
      {"n_k128", 1, 128, 256, 96, true, "q4_gemv_q8"},
      {"n_k1024", 1, 1024, 128, 64, true, "q4_gemv_q8"},
      {"n_k2048", 1, 2048, 64, 32, true, "q4_gemv_q8"},
      {"p_k64", 1, 64, 96, 128, false, "q4_gemv_q8"},
      {"n_m4", 4, 128, 96, 64, true, "linear_swiglu+linear"},
      {"p_m6", 6, 256, 64, 96, false, "linear_swiglu+linear"},
  };
  return s;
}

TEST(QuantMlp, EveryNodeMatchesItsReference) {
  graph::GraphBuilder b;
  Mlps mlps;
  for (const MlpSpec& s : specs()) mlps.add(b, s);
  // The pair of dispatches (the persist route, a GPU's default for these shapes, has a test below).
  Program prog(testing::shared_context(), b.build(), b.weights(), {{"quant_mlp_persist", "off"}});
  prog.set_timing(gpu::Timing::Dispatches);
  for (const MlpSpec& s : specs()) mlps.set(prog, s.name);
  prog.execute();
  for (const MlpSpec& s : specs()) mlps.verify(prog, s.name);
  // The one-row nodes ran the q8 down kernel, the others did not.
  std::set<std::string> q8;
  for (const gpu::DispatchTiming& t : prog.last_timings()) {
    if (t.kernel.find("q4_gemv.q8.") != std::string::npos) q8.insert(t.label);
  }
  EXPECT_EQ(q8, (std::set<std::string>{"#0 add_rms_norm_linear_swiglu_linear", "#1 add_rms_norm_linear_swiglu_linear",
                                       "#2 add_rms_norm_linear_swiglu_linear", "#3 linear_swiglu_linear"}));

  // Negative controls: out against act with a pair's values swapped, or with each run of 16
  // swapped with its neighbour, is out of the bound.
  for (const char* name : {"n_k128", "p_k64"}) {
    const std::vector<float> act = prog.read_f32(std::string(name) + ".act");
    std::vector<float> pairs = act, runs = act;
    for (size_t e = 0; e + 1 < act.size(); e += 2) std::swap(pairs[e], pairs[e + 1]);
    for (size_t e = 0; e + 31 < act.size(); e += 32) {
      for (size_t j = 0; j < 16; ++j) std::swap(runs[e + j], runs[e + 16 + j]);
    }
    const std::vector<float> y = prog.read_f32(std::string(name) + ".y");
    const int64_t i = specs()[name == std::string("n_k128") ? 0 : 3].i;
    EXPECT_FALSE(testing::within_bound(y, mlps.down_reference(name, pairs), i, false)) << name << " pairs";
    EXPECT_FALSE(testing::within_bound(y, mlps.down_reference(name, runs), i, false)) << name << " runs";
  }
}

// With one workgroup per row (quant_gemv_stage_wgs = 1) the staged gate/up kernel walks every
// column tile, each tile's runs rounded before the next tile's pairs go into yq.
TEST(QuantMlp, OneWorkgroupWalkingEveryTileMatches) {
  graph::GraphBuilder b;
  Mlps mlps;
  const std::vector<MlpSpec> one_row(specs().begin(), specs().begin() + 3);  // the norm nodes
  for (const MlpSpec& s : one_row) mlps.add(b, s);
  Program prog(testing::shared_context(), b.build(), b.weights(),
               {{"quant_gemv_stage_wgs", "1"}, {"quant_mlp_persist", "off"}});
  for (const MlpSpec& s : one_row) mlps.set(prog, s.name);
  prog.execute();
  for (const MlpSpec& s : one_row) mlps.verify(prog, s.name);
}

// quant_gemv_x8 off keeps every one-row product's x in f32, act too: the two ops' routes.
TEST(QuantMlp, X8OffTakesTheTwoOpsRoutes) {
  graph::GraphBuilder b;
  Mlps mlps;
  MlpSpec s = specs()[0];
  s.route = "linear_swiglu+linear";
  mlps.add(b, s);
  Program prog(testing::shared_context(), b.build(), b.weights(), {{"quant_gemv_x8", "off"}});
  prog.set_timing(gpu::Timing::Dispatches);
  mlps.set(prog, s.name);
  prog.execute();
  mlps.verify(prog, s.name);
  EXPECT_NE(testing::rejected(prog.routes().at(0)).find("quant_gemv_x8 is off"), std::string::npos);
  for (const gpu::DispatchTiming& t : prog.last_timings()) {
    EXPECT_EQ(t.kernel.find("q4_gemv.q8."), std::string::npos) << t.kernel;
  }
}

// The persist route (gate/up, handoff and down in one dispatch) gives what the pair of
// dispatches gives, bit for bit, over several steps with new inputs (the handoff's words are
// back at zero after each): the same products with the same lanes (as many workgroups in both,
// the workgroup reduction in both: a device without subgroups). One workgroup on a CPU adapter
// (the route takes no more there), on a GPU also 64, 256 and 4,096 (more than a GPU runs at
// once: the waits make the gate/up tiles of workgroups that have not started). With
// quant_mlp_persist_help, workgroup 0 claims none of its gate/up tiles, leaving them to a wait,
// which must make them all (else act, and so y, would differ). Both with act staged in workgroup
// memory after the handoff (the norm nodes) and read where it lies: n_act's act (4,672 wide:
// 7,008 bytes in int8) does not fit beside its gate/up product's 9,440 bytes on a device with
// 16 KiB of workgroup memory.
TEST(QuantMlp, PersistMatchesThePairBitForBit) {
  const bool gpu = !testing::shared_context().adapter().is_cpu;
  const std::vector<MlpSpec> one_row(specs().begin(), specs().begin() + 3);  // the norm nodes
  const std::vector<MlpSpec> wide_act{{"n_act", 1, 128, 4672, 32, true, ""}};
  for (const auto& [storage, nodes] : {std::pair{0u, one_row}, std::pair{16384u, wide_act}}) {
    gpu::Context& device = testing::device_like(false, storage);
    for (const char* wgs : {"1", "64", "256", "4096"}) {
      for (const char* help : {"off", "on"}) {
        if (!gpu && std::atoi(wgs) > 1) continue;
        SCOPED_TRACE(std::string("quant_mlp_persist_wgs ") + wgs + ", quant_mlp_persist_help " + help +
                     (storage ? ", act read where it lies" : ", act staged"));
        graph::GraphBuilder b1, b2;
        Mlps pair_mlps, persist_mlps;
        for (MlpSpec s : nodes) {
          pair_mlps.add(b1, s);
          s.route = "q4_gemv_persist";
          persist_mlps.add(b2, s);
        }
        const RuntimeOptions base{{"quant_gemv_stage_wgs", wgs}, {"quant_mlp_persist", "off"}};
        RuntimeOptions with = base;
        with["quant_mlp_persist"] = "on";
        with["quant_mlp_persist_wgs"] = wgs;
        with["quant_mlp_persist_help"] = help;
        Program pair(device, b1.build(), b1.weights(), base);
        Program persist(device, b2.build(), b2.weights(), with);
        persist.set_timing(gpu::Timing::Dispatches);
        for (int step = 0; step < 3; ++step) {
          for (const MlpSpec& s : nodes) {
            pair_mlps.set(pair, s.name);
            persist_mlps.set(persist, s.name);
          }
          pair.execute();
          persist.execute();
          EXPECT_EQ(persist.dispatches_per_execute(), nodes.size());
          EXPECT_EQ(pair.dispatches_per_execute(), 2 * nodes.size());
          for (const MlpSpec& s : nodes) {
            persist_mlps.verify(persist, s.name);
            for (const char* out : {".act", ".y", ".sum"}) {
              EXPECT_EQ(persist.read_f32(s.name + out), pair.read_f32(s.name + out)) << s.name << out;
            }
          }
          for (const gpu::DispatchTiming& t : persist.last_timings()) {
            EXPECT_NE(t.kernel.find(".persist"), std::string::npos) << t.kernel;
          }
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

// Above four rows both products are q4_gemm's; where the gate/up product ends in its reduce
// pass (split K), that pass rounds act to int8 for the down product, which then runs no
// q8_chunks: the node gives what the two ops as nodes of their own give (the down product
// rounding act itself), bit for bit: at 6 rows and 20 (16-row tiles), 40 (64-row tiles), and
// 1,024 rows (256 tiles: K is not split, so there is no reduce pass and the down product
// rounds act itself). The two-node graph runs q8_chunks for each down product (what the
// comparison is against), the node only at 1,024 rows. Negative control: a step 1% off in the
// reduce pass's rounding fails the comparison (act's bound in verify() does not see it).
TEST(QuantMlp, GemmPairRoundsActInTheReducePassWithTheSameBits) {
  const std::vector<MlpSpec> nodes{{"p_m6", 6, 256, 64, 96, false, "linear_swiglu+linear"},
                                   {"n_m20", 20, 128, 96, 64, true, "linear_swiglu+linear"},
                                   {"n_m40", 40, 64, 160, 32, true, "linear_swiglu+linear"},
                                   {"p_m1024", 1024, 64, 1024, 32, false, "linear_swiglu+linear"}};
  graph::GraphBuilder b1, b2;
  Mlps one, two;
  for (const MlpSpec& s : nodes) {
    one.add(b1, s);
    two.add(b2, s, true);
  }
  Program fused(testing::shared_context(), b1.build(), b1.weights());
  Program apart(testing::shared_context(), b2.build(), b2.weights());
  fused.set_timing(gpu::Timing::Dispatches);
  apart.set_timing(gpu::Timing::Dispatches);
  for (const MlpSpec& s : nodes) {
    one.set(fused, s.name);
    two.set(apart, s.name);
  }
  fused.execute();
  apart.execute();
  for (const MlpSpec& s : nodes) {
    one.verify(fused, s.name);
    for (const char* out : {".act", ".y"}) {
      EXPECT_EQ(fused.read_f32(s.name + out), apart.read_f32(s.name + out)) << s.name << out;
    }
  }
  auto rounding = [](const Program& p) {
    std::multiset<std::string> labels;
    for (const gpu::DispatchTiming& t : p.last_timings()) {
      if (t.kernel.find("q8_chunks") != std::string::npos) labels.insert(t.label);
    }
    return labels;
  };
  // q8_chunks for the gate/up products without a norm (the norm's dispatch rounds x otherwise),
  // and for the down products that the gate/up's reduce pass did not feed.
  EXPECT_EQ(rounding(fused), (std::multiset<std::string>{"#0 linear_swiglu_linear", "#3 linear_swiglu_linear",
                                                         "#3 linear_swiglu_linear"}));
  EXPECT_EQ(rounding(apart).size(), 2u + 4u);
}

// A wait that gave up (quant_mlp_persist_fault makes every wait set the fault word at once) is
// an error at the next read, synchronous or asynchronous, naming the route and the option that
// avoids it, and stays one until the state is reset. Negative control: the same program without
// the option reads its values (and PersistMatchesThePairBitForBit reads them on every step).
TEST(QuantMlp, PersistWaitThatGaveUpFailsTheRead) {
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault ? "fault" : "no fault");
    graph::GraphBuilder b;
    Mlps mlps;
    MlpSpec s = specs()[0];
    s.route = "q4_gemv_persist";
    mlps.add(b, s);
    RuntimeOptions options{{"quant_gemv_stage_wgs", "1"}, {"quant_mlp_persist", "on"}, {"quant_mlp_persist_wgs", "1"}};
    if (fault) options["quant_mlp_persist_fault"] = "on";
    Program prog(testing::shared_context(), b.build(), b.weights(), options);
    mlps.set(prog, s.name);
    AsyncRead later = prog.read_async(s.name + ".y");
    prog.execute();
    if (!fault) {
      mlps.verify(prog, s.name);
      EXPECT_EQ(later.f32(), prog.read_f32(s.name + ".y"));
      continue;
    }
    // Each read twice: the fault stays, and a second take of the asynchronous read says why too.
    auto expect_fault = [](const std::function<void()>& read, const char* which) {
      for (int i = 0; i < 2; ++i) {
        try {
          read();
          ADD_FAILURE() << "the " << which << " read after a wait that gave up did not throw";
        } catch (const std::runtime_error& e) {
          const std::string what = e.what();
          EXPECT_NE(what.find("a wait for them gave up"), std::string::npos) << what;
          EXPECT_NE(what.find("q4_gemv_persist"), std::string::npos) << what;
          EXPECT_NE(what.find("quant_mlp_persist=off"), std::string::npos) << what;
        }
      }
    };
    expect_fault([&] { prog.read_f32(s.name + ".y"); }, "synchronous");
    expect_fault([&] { later.f32(); }, "asynchronous");
    prog.reset_state();  // the words back to 0: the (stale) values read again
    EXPECT_NO_THROW(prog.read_f32(s.name + ".y"));
  }
}

// Unset, quant_mlp_persist takes the persist route on a GPU adapter where the gate/up product
// has at most one tile per workgroup (256 of them), and not on a CPU adapter; set on, it takes it
// anywhere (and the route then runs one workgroup on a CPU adapter).
TEST(QuantMlp, PersistByDefaultOnlyOnGpusWhereTilesFit) {
  const bool gpu = !testing::shared_context().adapter().is_cpu;
  graph::GraphBuilder b;
  Mlps mlps;
  const MlpSpec fits = specs()[0];                          // 512 gate/up columns
  const MlpSpec wide{"wide", 1, 32, 4160, 32, true, ""};    // 8,320: up to 260 tiles
  mlps.add(b, fits);
  mlps.add(b, wide);
  for (const char* on : {"", "on"}) {
    SCOPED_TRACE(std::string("quant_mlp_persist ") + on);
    RuntimeOptions options;
    if (*on) options["quant_mlp_persist"] = on;
    Program prog(testing::shared_context(), b.build(), b.weights(), options);
    const std::string fits_why = testing::rejected(prog.routes().at(0)), wide_why = testing::rejected(prog.routes().at(1));
    EXPECT_EQ(prog.routes().at(0).route, *on || gpu ? "q4_gemv_persist" : "q4_gemv_q8") << fits_why;
    EXPECT_EQ(prog.routes().at(1).route, *on ? "q4_gemv_persist" : "q4_gemv_q8") << wide_why;
    if (!*on) {
      const std::string& why = gpu ? wide_why : fits_why;
      EXPECT_NE(why.find(gpu ? "260 gate/up tiles for 256 workgroups" : "a CPU adapter"), std::string::npos) << why;
    }
    for (const MlpSpec& s : {fits, wide}) mlps.set(prog, s.name);
    prog.execute();
    for (const MlpSpec& s : {fits, wide}) mlps.verify(prog, s.name, false);
  }
}

TEST(QuantMlp, MalformedOptionIsABuildError) {
  graph::GraphBuilder b;
  Mlps mlps;
  mlps.add(b, specs()[0]);
  EXPECT_TRUE(testing::build_fails(b, {{"quant_mlp_persist", "maybe"}},
                                   "runtime option quant_mlp_persist is 'maybe'; it takes auto | on | off"));
  EXPECT_TRUE(testing::build_fails(b, {{"quant_mlp_persist_wgs", "x"}}, "runtime option quant_mlp_persist_wgs is 'x'"));
  EXPECT_TRUE(testing::build_fails(b, {{"quant_mlp_persist_fault", "x"}},
                                   "runtime option quant_mlp_persist_fault is 'x'; it takes on | off"));
}

}  // namespace
}  // namespace wgx::runtime
