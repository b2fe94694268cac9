// The registry itself: coverage of the core library by the case tables, registration rules,
// attribute resolution, and custom ops.
#include <set>

#include "graph/error.h"
#include "schema_cases.h"

namespace wgx::graph::testing {
namespace {

TEST(GraphRegistry, EveryCoreOpHasGoodAndBadCases) {
  std::set<std::string> good = {"exp",  "log",  "sqrt", "rsqrt", "sigmoid",   "silu",
                                "gelu", "tanh", "sin",  "cos",   "reciprocal"};  // the unary loops
  std::set<std::string> bad = good;
  for (const auto* table : {&elementwise_cases(), &shape_cases(), &transformer_cases()}) {
    for (const SchemaCase& c : *table) (c.expect[0] == '!' ? bad : good).insert(c.op);
  }
  const std::vector<std::string> names = OpRegistry::global().names();
  EXPECT_GE(names.size(), 55u);  // the core library; tests may add their own ops
  for (const std::string& op : names) {
    if (op.rfind("test.", 0) == 0) continue;  // added by a test
    EXPECT_TRUE(good.count(op)) << op << " has no passing inference case";
    EXPECT_TRUE(bad.count(op)) << op << " has no failing inference case";
  }
}

OpSchema simple(std::string name) {
  OpSchema s;
  s.name = std::move(name);
  s.inputs = {{.name = "x"}};
  s.infer = [](const InferContext& ctx) { return InferResult::success(ctx.type(0)); };
  return s;
}

TEST(GraphRegistry, RejectsMalformedSchemas) {
  OpRegistry r;
  r.add(simple("mine"));
  EXPECT_THROW(r.add(simple("mine")), GraphError);
  OpSchema no_infer = simple("a");
  no_infer.infer = nullptr;
  EXPECT_THROW(r.add(no_infer), GraphError);
  OpSchema optional_first = simple("b");
  optional_first.inputs = {{.name = "x", .optional = true}, {.name = "y"}};
  EXPECT_THROW(r.add(optional_first), GraphError);
  OpSchema variadic_first = simple("c");
  variadic_first.inputs = {{.name = "x", .variadic = true}, {.name = "y"}};
  EXPECT_THROW(r.add(variadic_first), GraphError);
  EXPECT_THROW(r.add(simple("")), GraphError);
  EXPECT_NE(r.find("mine"), nullptr);
  EXPECT_EQ(r.find("add"), nullptr);  // a fresh registry is empty
}

TEST(GraphRegistry, ResolvesDefaultsAndPromotesKinds) {
  const OpSchema* slice = OpRegistry::global().find("slice");
  ASSERT_NE(slice, nullptr);
  Attrs a = slice->resolve_attrs({{"start", 3}});
  EXPECT_EQ(a.at("dim").as_int(), 0);
  EXPECT_EQ(a.at("start").as_int(), 3);
  EXPECT_EQ(a.at("end").as_int(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(a.at("step").as_int(), 1);
  const OpSchema* clamp = OpRegistry::global().find("clamp");
  Attrs c = clamp->resolve_attrs({{"min", 0}});
  EXPECT_EQ(c.at("min").kind(), AttrKind::Float);
  EXPECT_EQ(c.count("max"), 0u);  // optional without default stays absent
  const OpSchema* reshape = OpRegistry::global().find("reshape");
  Attrs r = reshape->resolve_attrs({{"shape", {2, 3}}});
  EXPECT_EQ(r.at("shape").as_dims(), (Shape{2, 3}));
}

TEST(GraphRegistry, ThrowingInferenceBecomesAnError) {
  OpSchema s = simple("thrower");
  s.infer = [](const InferContext&) -> InferResult { throw GraphError("nope"); };
  Value x = f32({3});
  const Value* in[] = {&x};
  InferResult r = s.check(in, {}, test_syms());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, "nope");
}

TEST(GraphRegistry, CustomOpInGlobalRegistry) {
  if (!OpRegistry::global().find("test.double_last")) {
    OpSchema s;
    s.name = "test.double_last";
    s.inputs = {{.name = "x", .dtypes = kFloatTypes, .min_rank = 1}};
    s.attrs = {AttrSpec::defaulted("factor", 2)};
    s.infer = [](const InferContext& ctx) {
      Shape out = ctx.shape(0);
      auto d = scale(out.back(), ctx.attr_int("factor"));
      if (!d) return InferResult::fail("overflow");
      out.back() = *d;
      return InferResult::success(ctx.dtype(0), out);
    };
    OpRegistry::global().add(std::move(s));
  }
  EXPECT_EQ(infer_text("test.double_last", {f32({3, kSeq})}), "f32[3, 2*seq_len]");
  EXPECT_EQ(infer_text("test.double_last", {f32({3, 5})}, {{"factor", 3}}), "f32[3, 15]");
}

}  // namespace
}  // namespace wgx::graph::testing
