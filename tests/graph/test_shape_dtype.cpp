// Dims, shapes, dtypes and tensor byte sizes.
#include <gtest/gtest.h>

#include "graph/error.h"
#include "graph/graph.h"
#include "graph/shape.h"
#include "graph_test_util.h"

namespace wgx::graph::testing {
namespace {

TEST(GraphDim, ConstantsAndAffineForms) {
  const Dim c = 37;
  EXPECT_TRUE(c.is_const());
  EXPECT_TRUE(c.is_const(37));
  const Dim s = kSeq;
  EXPECT_FALSE(s.is_const());
  EXPECT_EQ(s.coef(), 1);
  EXPECT_EQ(Dim::affine(0, kSeq, 5), Dim(5));  // coefficient 0 is a constant
  EXPECT_NE(Dim::affine(2, kSeq, 1), Dim::affine(2, kPos, 1));
  EXPECT_EQ(Dim::affine(2, kSeq, 1), Dim::affine(2, kSeq, 1));
}

TEST(GraphDim, Evaluates) {
  const int64_t values[] = {11, 3};
  EXPECT_EQ(Dim(113).eval(values), 113);
  EXPECT_EQ(Dim(kSeq).eval(values), 11);
  EXPECT_EQ(Dim::affine(2, kPos, 1).eval(values), 7);
  EXPECT_EQ(Dim::affine(-1, kSeq, 128).max_value(test_syms()), 127);
  EXPECT_EQ(Dim::affine(-1, kSeq, 128).min_value(test_syms()), 0);
  EXPECT_EQ(Dim::affine(3, kSeq, 0).max_value(test_syms()), 384);
  const int64_t one[] = {1};
  EXPECT_THROW(Dim(kPos).eval(one), GraphError);  // no value for input_pos
  const int64_t big[] = {INT64_MAX};
  EXPECT_THROW(Dim::affine(2, kSeq, 0).eval(big), GraphError);
}

TEST(GraphDim, Solves) {
  EXPECT_EQ(Dim(kSeq).solve(37), 37);
  EXPECT_EQ(Dim::affine(2, kSeq, 1).solve(23), 11);
  EXPECT_EQ(Dim::affine(2, kSeq, 1).solve(22), std::nullopt);
  EXPECT_EQ(Dim(5).solve(5), std::nullopt);
}

TEST(GraphDim, Arithmetic) {
  EXPECT_EQ(add(Dim(kSeq), Dim(3)), Dim::affine(1, kSeq, 3));
  EXPECT_EQ(add(Dim(kSeq), Dim(kSeq)), Dim::affine(2, kSeq, 0));
  EXPECT_EQ(add(Dim(kSeq), Dim(kPos)), std::nullopt);
  EXPECT_EQ(sub(Dim(kSeq), Dim(kSeq)), Dim(0));
  EXPECT_EQ(scale(Dim::affine(1, kSeq, 1), 37), Dim::affine(37, kSeq, 37));
  EXPECT_EQ(scale(Dim(INT64_MAX), 2), std::nullopt);
}

TEST(GraphDim, ChecksRanges) {
  EXPECT_EQ(dim_error(Dim(kSeq), test_syms()), "");
  EXPECT_NE(dim_error(Dim(-1), test_syms()), "");
  EXPECT_NE(dim_error(Dim::affine(1, kPos, -1), test_syms()).find("[-1, 2046]"), std::string::npos);
  EXPECT_NE(dim_error(Dim(SymId{7}), test_syms()).find("sym 7"), std::string::npos);
  EXPECT_NE(dim_error(Dim::affine(INT64_MAX, kSeq, 0), test_syms()).find("overflows"),
            std::string::npos);
  EXPECT_NE(dim_error(Dim(kMaxDimSize + 1), test_syms()), "");
}

TEST(GraphShape, PrintsAndEvaluates) {
  const Shape s = {1, kSeq, 2048};
  EXPECT_EQ(to_string(s, &test_syms()), "[1, seq_len, 2048]");
  EXPECT_EQ(to_string(s), "[1, s0, 2048]");
  EXPECT_EQ(to_string(Shape{}), "[]");
  EXPECT_EQ(to_string(Dim::affine(2, kSeq, 1), &test_syms()), "2*seq_len+1");
  EXPECT_EQ(to_string(Dim::affine(-1, kPos, 10), &test_syms()), "-input_pos+10");
  EXPECT_EQ(to_string(Dim::affine(1, kPos, -3), &test_syms()), "input_pos-3");
  const int64_t values[] = {11, 0};
  EXPECT_EQ(eval_shape(s, values), (std::vector<int64_t>{1, 11, 2048}));
  EXPECT_EQ(max_shape(s, test_syms()), (std::vector<int64_t>{1, 128, 2048}));
  EXPECT_EQ(max_numel(s, test_syms()), 128 * 2048);
  EXPECT_FALSE(is_static(s));
  EXPECT_TRUE(is_static(Shape{3, 4}));
  EXPECT_EQ(max_numel(Shape{kMaxDimSize, kMaxDimSize, kMaxDimSize}, test_syms()), std::nullopt);
}

TEST(GraphDType, NamesCodesAndSizes) {
  for (uint8_t code = 1; code <= kMaxDTypeCode; ++code) {
    const DType d = *dtype_from_code(code);
    EXPECT_EQ(dtype_from_name(dtype_name(d)), d);
  }
  EXPECT_EQ(dtype_from_code(0), std::nullopt);
  EXPECT_EQ(dtype_from_code(kMaxDTypeCode + 1), std::nullopt);
  EXPECT_EQ(dtype_from_name("float32"), std::nullopt);
  EXPECT_EQ(element_bytes(DType::f32), 4u);
  EXPECT_EQ(element_bytes(DType::bf16), 2u);
  EXPECT_EQ(element_bytes(DType::i64), 8u);
  EXPECT_EQ(element_bytes(DType::boolean), 1u);
  EXPECT_EQ(element_bytes(DType::q4gsw), 0u);
  EXPECT_TRUE(is_float(DType::bf16));
  EXPECT_TRUE(is_integer(DType::u8));
  EXPECT_FALSE(is_integer(DType::boolean));
}

TEST(GraphTensorType, BytesAndQ4Layout) {
  EXPECT_EQ(tensor_bytes({DType::f16, {113, 37}, {}}, test_syms()), 113u * 37 * 2);
  EXPECT_EQ(tensor_bytes({DType::f32, {1, kSeq, 11}, {}}, test_syms()), 128u * 11 * 4);
  const TensorType q{DType::q4gsw, {113, 128}, {32, DType::f16}};
  EXPECT_EQ(quant_error(q), "");
  auto layout = q4gsw_layout({113, 128}, q.quant);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->packed_bytes, 113u * 64);
  EXPECT_EQ(layout->scales_offset, 113u * 64);
  EXPECT_EQ(layout->groups_per_row, 4u);
  EXPECT_EQ(layout->scale_bytes, 113u * 4 * 2);
  EXPECT_EQ(tensor_bytes(q, test_syms()), 113u * 64 + 113u * 4 * 2);
  EXPECT_EQ(to_string(q), "q4gsw<g32,f16>[113, 128]");
  EXPECT_NE(quant_error({DType::q4gsw, {113, 48}, {32, DType::f32}}), "");  // 48 % 32
  EXPECT_NE(quant_error({DType::q4gsw, {113, 64}, {16, DType::f32}}), "");  // group 16
  EXPECT_NE(quant_error({DType::q4gsw, {113, 64}, {32, DType::i32}}), "");  // scale type
  EXPECT_NE(quant_error({DType::f32, {113, 64}, {32, DType::f32}}), "");    // params on f32
  EXPECT_EQ(q4gsw_layout({}, q.quant), std::nullopt);
}

}  // namespace
}  // namespace wgx::graph::testing
