// The text form of a graph.
#include <gtest/gtest.h>

#include "graph/builder.h"
#include "graph/print.h"

namespace wgx::graph {
namespace {

TEST(GraphPrint, OneLinePerItem) {
  GraphBuilder b;
  const SymId seq = b.sym("seq_len", 1, 128);
  const ValueId x = b.input("x", DType::f32, {1, seq, 2048});        // %1
  const ValueId w = b.input("w", DType::f32, {2048, 2048});          // %2
  const ValueId cache = b.mutable_buffer("cache", DType::f16, {4});  // %3
  const ValueId half = b.scalar(0.5);                                // %4
  const ValueId y = b.op1("matmul", {x, w}, {}, "proj");             // %5
  const ValueId z = b.op1("softmax", {b.op1("mul", {y, half})}, {{"dim", -1}});
  const ValueId c = b.op1("neg", {cache});
  b.mutate(cache, c);
  b.output("z", z);
  const std::string text = to_string(b.build());
  EXPECT_EQ(text,
            "sym seq_len in [1, 128]\n"
            "input %1 \"x\" : f32[1, seq_len, 2048]\n"
            "input %2 \"w\" : f32[2048, 2048]\n"
            "buffer %3 \"cache\" : f16[4] init zeros\n"
            "%0 = sym seq_len\n"
            "%4 = scalar 0.5 : f32\n"
            "%5 = matmul(%1, %2) : f32[1, seq_len, 2048]  # proj\n"
            "%6 = mul(%5, %4) : f32[1, seq_len, 2048]\n"
            "%7 = softmax(%6) {dim=-1} : f32[1, seq_len, 2048]\n"
            "%8 = neg(%3) : f16[4]\n"
            "output \"z\" = %7\n"
            "mutate \"cache\" <- %8\n");
}

TEST(GraphPrint, ConstantsAndAttributes) {
  GraphBuilder b;
  const ValueId w = b.constant("w", DType::i32, {2}, std::vector<uint8_t>(8));
  const ValueId r = b.op1("reshape", {w}, {{"shape", Shape{2, 1}}});
  b.output("r", b.op1("to_copy", {r}, {{"dtype", "f16"}}));
  const std::string text = to_string(b.build());
  EXPECT_NE(text.find("const %0 \"w\" : i32[2] @ blob 0 [0, +8)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("%1 = reshape(%0) {shape=[2, 1]} : i32[2, 1]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("%2 = to_copy(%1) {dtype=\"f16\"} : f16[2, 1]\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace wgx::graph
