// The memory planner on its own: reuse by lifetime, views sharing storage, outputs kept to the
// end, mutations in place only when nothing can observe it and the kernel updates that input as
// that output (one or several such pairs per node).
#include "graph/builder.h"
#include "runtime/memory_plan.h"
#include "runtime_test_util.h"

namespace wgx::runtime {
namespace {

using graph::DType;
using graph::GraphBuilder;

MemoryPlanInput input_for(const graph::Graph& g, const std::vector<std::string>& views = {"reshape"}) {
  MemoryPlanInput in;
  in.graph = &g;
  for (const graph::Value& v : g.values) {
    in.capacity.push_back(v.kind == graph::ValueKind::Tensor ? *graph::tensor_bytes(v.type, g.syms) : 0);
  }
  for (const graph::Node& n : g.nodes) {
    bool view = false;
    for (const auto& name : views) view |= n.op == name;
    in.views.push_back(view);
    in.in_place.push_back(n.op == "update");  // no such op: nothing updates in place here
  }
  return in;
}

bool overlap(const MemoryPlan& p, const MemoryPlanInput&, graph::ValueId a, graph::ValueId b) {
  return p.slot[a] == p.slot[b];
}

TEST(MemoryPlan, ValuesAliveTogetherNeverOverlap) {
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {1000});
  auto t1 = b.op1("exp", {x});
  auto t2 = b.op1("exp", {x});
  auto t3 = b.op1("add", {t1, t2});  // t1, t2 alive together
  auto t4 = b.op1("exp", {t3});      // t1, t2 dead: may reuse their space
  b.output("y", t4);
  const graph::Graph g = b.build();
  const MemoryPlanInput in = input_for(g);
  const MemoryPlan p = plan_memory(in);
  EXPECT_FALSE(overlap(p, in, t1, t2));
  EXPECT_FALSE(overlap(p, in, t1, t3));
  EXPECT_FALSE(overlap(p, in, t2, t3));
  EXPECT_FALSE(overlap(p, in, t3, t4));
  EXPECT_EQ(p.slot[x], kNoSlot);               // inputs have buffers of their own
  EXPECT_EQ(p.planned_bytes(), 3u * 4000);      // t4 reuses t1's or t2's slot
  EXPECT_EQ(p.unplanned_bytes, 4u * 4000);
}

TEST(MemoryPlan, ViewsShareTheirSourceAndExtendItsLife) {
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {64});
  auto t = b.op1("exp", {x});
  auto v = b.op1("reshape", {t}, {{"shape", graph::Shape{8, 8}}});
  auto u = b.op1("exp", {x});                    // while v (so t) is still needed
  b.output("y", b.op1("add", {v, b.op1("reshape", {u}, {{"shape", graph::Shape{8, 8}}})}));
  const graph::Graph g = b.build();
  const MemoryPlanInput in = input_for(g);
  const MemoryPlan p = plan_memory(in);
  EXPECT_EQ(p.root[v], t);
  EXPECT_FALSE(overlap(p, in, t, u));
}

TEST(MemoryPlan, AMutationThatDoesNotReadItsBufferIsWrittenThereDirectly) {
  GraphBuilder b;
  auto last = b.mutable_buffer("last", DType::f32, {16});
  auto x = b.input("x", DType::f32, {16});
  auto s = b.op1("exp", {x});
  b.mutate(last, s);
  const graph::Graph g = b.build();
  const MemoryPlan p = plan_memory(input_for(g));
  EXPECT_EQ(p.root[s], last);
  EXPECT_TRUE(p.copies_after[0].empty());
}

TEST(MemoryPlan, AMutationThatReadsItsBufferIsCopiedUnlessTheKernelUpdatesInPlace) {
  GraphBuilder b;
  auto acc = b.mutable_buffer("acc", DType::f32, {16});
  auto x = b.input("x", DType::f32, {16});
  auto s = b.op1("add", {acc, x});
  b.mutate(acc, s);
  const graph::Graph g = b.build();
  MemoryPlanInput in = input_for(g);
  const MemoryPlan copied = plan_memory(in);
  EXPECT_EQ(copied.root[s], s);
  ASSERT_EQ(copied.copies_after[0].size(), 1u);
  EXPECT_EQ(copied.copies_after[0][0].first, s);
  in.in_place[0] = true;  // as if add updated input 0 where it lies
  const MemoryPlan updated = plan_memory(in);
  EXPECT_EQ(updated.root[s], acc);
  EXPECT_TRUE(updated.copies_after[0].empty());
}

TEST(MemoryPlan, AnOpUpdatingTwoBuffersInPlaceWritesBothMutationsThere) {
  GraphBuilder b;
  auto pos = b.sym_value(b.sym("pos", 0, 15));
  auto q = b.input("q", DType::f32, {1, 2, 4, 8});
  auto k = b.input("k", DType::f32, {1, 2, 2, 8});
  auto v = b.input("v", DType::f32, {1, 2, 2, 8});
  auto kc = b.mutable_buffer("k_cache", DType::f32, {1, 2, 16, 8});
  auto vc = b.mutable_buffer("v_cache", DType::f32, {1, 2, 16, 8});
  auto outs = b.op("rope_update_cache", {q, k, v, kc, vc, pos});
  b.output("q_out", outs[0]);
  b.mutate(kc, outs[1]);
  b.mutate(vc, outs[2]);
  const graph::Graph g = b.build();
  MemoryPlanInput in = input_for(g);
  in.in_place[0] = InPlace{{3, 1}, {4, 2}};  // k_cache as output 1, v_cache as output 2
  const MemoryPlan both = plan_memory(in);
  EXPECT_EQ(both.root[outs[1]], kc);
  EXPECT_EQ(both.root[outs[2]], vc);
  EXPECT_TRUE(both.copies_after[0].empty());

  // Negative controls: pairs that do not name a mutation's input and output leave it to a copy.
  in.in_place[0] = InPlace{{3, 2}, {4, 1}};
  EXPECT_EQ(plan_memory(in).copies_after[0].size(), 2u);
  in.in_place[0] = InPlace{{3, 1}};
  const MemoryPlan one = plan_memory(in);
  EXPECT_EQ(one.root[outs[1]], kc);
  EXPECT_EQ(one.root[outs[2]], outs[2]);
  ASSERT_EQ(one.copies_after[0].size(), 1u);
  EXPECT_EQ(one.copies_after[0][0].second, 1u);  // v_cache, buffer 1
  in.in_place[0] = true;  // input 0 (q) as output 0: neither cache
  EXPECT_EQ(plan_memory(in).copies_after[0].size(), 2u);
}

TEST(MemoryPlan, ReadingTheOldValueThroughALaterViewForcesACopy) {
  GraphBuilder b;
  auto last = b.mutable_buffer("last", DType::f32, {16});
  auto x = b.input("x", DType::f32, {16});
  auto old_view = b.op1("reshape", {last}, {{"shape", graph::Shape{4, 4}}});
  auto s = b.op1("exp", {x});
  b.mutate(last, s);
  b.output("old", b.op1("exp", {old_view}));  // reads last's old contents after s was made
  const graph::Graph g = b.build();
  const MemoryPlan p = plan_memory(input_for(g));
  EXPECT_EQ(p.root[s], s);
  EXPECT_EQ(p.copies_after[1].size(), 1u);
}

TEST(MemoryPlan, OutputsLiveToTheEnd) {
  GraphBuilder b;
  auto x = b.input("x", DType::f32, {256});
  auto out1 = b.op1("exp", {x});
  auto t = b.op1("exp", {x});
  auto out2 = b.op1("exp", {t});
  b.output("a", out1);
  b.output("b", out2);
  const graph::Graph g = b.build();
  const MemoryPlanInput in = input_for(g);
  const MemoryPlan p = plan_memory(in);
  EXPECT_FALSE(overlap(p, in, out1, t));
  EXPECT_FALSE(overlap(p, in, out1, out2));
}

}  // namespace
}  // namespace wgx::runtime
