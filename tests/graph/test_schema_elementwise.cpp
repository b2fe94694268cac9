// Inference of the elementwise and reduction schemas, good and bad, with prime sizes.
#include "schema_cases.h"

namespace wgx::graph::testing {

const std::vector<SchemaCase>& elementwise_cases() {
  const Dim S = kSeq;
  const Dim P = kPos;
  using I = std::vector<int64_t>;
  // clang-format off: one case per line reads as a table
  static const std::vector<SchemaCase> cases = {
      // Binary arithmetic and broadcasting.
      {"add_same", "add", {f32({113, 37}), f32({113, 37})}, {}, "f32[113, 37]"},
      {"add_broadcast", "add", {f32({113, 1}), f32({37})}, {}, "f32[113, 37]"},
      {"add_broadcast_rank", "add", {f32({11, 1, 37}), f32({113, 1})}, {}, "f32[11, 113, 37]"},
      {"add_bad_broadcast", "add", {f32({113, 37}), f32({11, 37})}, {}, "!do not broadcast"},
      {"add_sym_with_one", "add", {f32({1, S, 37}), f32({S, 1})}, {}, "f32[1, seq_len, 37]"},
      {"add_sym_vs_sym", "add", {f32({S}), f32({P})}, {}, "!seq_len vs input_pos"},
      {"add_sym_vs_const", "add", {f32({S, 37}), f32({11, 37})}, {}, "!do not broadcast"},
      {"add_affine_equal",
       "add",
       {f32({Dim::affine(2, kSeq, 1)}), f32({Dim::affine(2, kSeq, 1)})},
       {},
       "f32[2*seq_len+1]"},
      {"add_dtype_mismatch", "add", {f32({3}), f16({3})}, {}, "!to_copy"},
      {"add_scalar", "add", {f32({113}), scalar_f(0.5)}, {}, "f32[113]"},
      {"add_int_scalar_on_float", "add", {scalar_i(2), f16({7})}, {}, "f16[7]"},
      {"add_float_scalar_on_int", "add", {i32({5}), scalar_f(0.5)}, {}, "!cannot combine"},
      {"add_two_scalars", "add", {scalar_f(1), scalar_f(2)}, {}, "!at least one input"},
      {"add_bool", "add", {boolean({3}), boolean({3})}, {}, "!dtype bool is not one of"},
      {"add_three_inputs", "add", {f32({3}), f32({3}), f32({3})}, {}, "!expects inputs (a, b)"},
      {"sub_i64", "sub", {i64({11, 37}), i64({37})}, {}, "i64[11, 37]"},
      {"sub_sym_value", "sub", {i64({3}), sym_value(kPos)}, {}, "i64[3]"},
      {"sub_unknown_attr",
       "sub",
       {f32({3}), f32({3})},
       {{"alpha", 2}},
       "!unknown attribute 'alpha'"},
      {"mul_i32", "mul", {i32({7, 1}), i32({1, 13})}, {}, "i32[7, 13]"},
      {"mul_u8_bool", "mul", {u8({7}), boolean({7})}, {}, "!dtype bool"},
      {"div_f32", "div", {f32({113, 37}), scalar_f(8)}, {}, "f32[113, 37]"},
      {"div_int", "div", {i32({3}), i32({3})}, {}, "!dtype i32 is not one of"},
      {"pow_scalar", "pow", {f32({11}), scalar_f(2)}, {}, "f32[11]"},
      {"pow_int", "pow", {i64({11}), scalar_i(2)}, {}, "!dtype i64"},
      {"maximum_i32", "maximum", {i32({11, 1}), i32({37})}, {}, "i32[11, 37]"},
      {"maximum_bool", "maximum", {boolean({11}), boolean({11})}, {}, "!dtype bool"},
      {"minimum_f16", "minimum", {f16({11}), f16({11})}, {}, "f16[11]"},
      {"minimum_mismatch",
       "minimum",
       {f16({11}), f32({11})},
       {},
       "!input 0 is f16 but input 1 is f32"},
      // Comparisons give bool.
      {"eq_f32", "eq", {f32({113}), f32({113})}, {}, "bool[113]"},
      {"eq_bool", "eq", {boolean({3}), scalar_i(1)}, {}, "!cannot combine"},
      {"ne_bool", "ne", {boolean({3}), boolean({1})}, {}, "bool[3]"},
      {"ne_shapes", "ne", {f32({3}), f32({4})}, {}, "!do not broadcast"},
      {"lt_broadcast", "lt", {i32({11, 1}), i32({1, 37})}, {}, "bool[11, 37]"},
      {"lt_bool", "lt", {boolean({3}), boolean({3})}, {}, "!dtype bool"},
      {"le_scalar", "le", {f32({S}), scalar_f(0)}, {}, "bool[seq_len]"},
      {"le_scalars", "le", {scalar_f(0), scalar_f(1)}, {}, "!at least one"},
      {"gt_sym", "gt", {i64({S}), sym_value(kPos)}, {}, "bool[seq_len]"},
      {"gt_mismatch", "gt", {i64({2}), i32({2})}, {}, "!to_copy"},
      {"ge_f16", "ge", {f16({2, 3}), f16({3})}, {}, "bool[2, 3]"},
      {"ge_q4", "ge", {q4({2, 32}, 32), f16({3})}, {}, "!dtype q4gsw"},
      // Logical ops take bools.
      {"logical_and", "logical_and", {boolean({11}), boolean({11})}, {}, "bool[11]"},
      {"logical_and_float", "logical_and", {f32({11}), boolean({11})}, {}, "!dtype f32"},
      {"logical_or_broadcast", "logical_or", {boolean({11, 1}), boolean({37})}, {}, "bool[11, 37]"},
      {"logical_or_shapes", "logical_or", {boolean({11}), boolean({37})}, {}, "!broadcast"},
      {"logical_xor", "logical_xor", {boolean({S}), boolean({S})}, {}, "bool[seq_len]"},
      {"logical_xor_int", "logical_xor", {i32({3}), i32({3})}, {}, "!dtype i32"},
      {"logical_not", "logical_not", {boolean({5})}, {}, "bool[5]"},
      {"logical_not_float", "logical_not", {f32({5})}, {}, "!dtype f32"},
      {"where_broadcast",
       "where",
       {boolean({11, 1}), f32({1, 37}), scalar_f(0)},
       {},
       "f32[11, 37]"},
      {"where_scalars",
       "where",
       {boolean({1, S, S}), scalar_f(0), scalar_f(-1e30)},
       {},
       "f32[1, seq_len, seq_len]"},
      {"where_float_cond",
       "where",
       {f32({3}), f32({3}), f32({3})},
       {},
       "!input 0 (cond): dtype f32"},
      {"where_mismatch", "where", {boolean({3}), f32({3}), f16({3})}, {}, "!to_copy"},
      {"where_scalar_cond", "where", {scalar_i(1), f32({3}), f32({3})}, {}, "!must be a tensor"},
      // Unary specials (the plain unary family is tested in a loop below).
      {"gelu_tanh", "gelu", {f32({113})}, {{"approximate", "tanh"}}, "f32[113]"},
      {"gelu_bad_mode",
       "gelu",
       {f32({113})},
       {{"approximate", "fast"}},
       "!approximate is \"fast\""},
      {"neg_i32", "neg", {i32({11})}, {}, "i32[11]"},
      {"neg_u8", "neg", {u8({11})}, {}, "!dtype u8"},
      {"abs_u8", "abs", {u8({11})}, {}, "u8[11]"},
      {"abs_bool", "abs", {boolean({11})}, {}, "!dtype bool"},
      {"clamp_min", "clamp", {f32({11, 37})}, {{"min", 0}}, "f32[11, 37]"},
      {"clamp_both", "clamp", {i32({11})}, {{"min", -1.5}, {"max", 2.5}}, "i32[11]"},
      {"clamp_none", "clamp", {f32({11})}, {}, "!needs min, max or both"},
      {"clamp_inverted", "clamp", {f32({11})}, {{"min", 3.0}, {"max", 2.0}}, "!min 3 > max 2"},
      {"clamp_string",
       "clamp",
       {f32({11})},
       {{"min", "zero"}},
       "!'min' is string but must be float"},
      {"to_copy_f16", "to_copy", {f32({1, S, 37})}, {{"dtype", "f16"}}, "f16[1, seq_len, 37]"},
      {"to_copy_bool", "to_copy", {boolean({3})}, {{"dtype", "f32"}}, "f32[3]"},
      {"to_copy_q4",
       "to_copy",
       {f32({32})},
       {{"dtype", "q4gsw"}},
       "!dtype \"q4gsw\" is not one of"},
      {"to_copy_unknown", "to_copy", {f32({3})}, {{"dtype", "f8"}}, "!dtype \"f8\""},
      {"to_copy_missing", "to_copy", {f32({3})}, {}, "!required attribute 'dtype' is missing"},
      // Reductions.
      {"sum_dim", "sum", {f32({113, 37})}, {{"dims", I{1}}}, "f32[113]"},
      {"sum_keepdim", "sum", {f32({113, 37})}, {{"dims", I{-1}}, {"keepdim", true}}, "f32[113, 1]"},
      {"sum_all", "sum", {f32({113, 37})}, {}, "f32[]"},
      {"sum_bool", "sum", {boolean({11})}, {}, "i32[]"},
      {"sum_i64", "sum", {i64({11, 3})}, {{"dims", I{0}}}, "i64[3]"},
      {"sum_twice", "sum", {f32({11, 37})}, {{"dims", I{0, -2}}}, "!listed twice"},
      {"sum_range", "sum", {f32({11, 37})}, {{"dims", I{2}}}, "!dim 2 is out of range for rank 2"},
      {"mean_sym", "mean", {f32({S, 37})}, {{"dims", I{-1}}}, "f32[seq_len]"},
      {"mean_int", "mean", {i32({3})}, {}, "!dtype i32"},
      {"amax_sym", "amax", {f32({S, 37})}, {{"dims", I{0}}}, "f32[37]"},
      {"amax_may_be_empty", "amax", {f32({P, 37})}, {{"dims", I{0}}}, "!may be empty"},
      {"amin_keepdim", "amin", {i32({11, 37})}, {{"dims", I{1}}, {"keepdim", true}}, "i32[11, 1]"},
      {"amin_empty", "amin", {f32({0})}, {}, "!may be empty"},
      {"argmax_last", "argmax", {f32({1, S, 113})}, {{"dim", -1}}, "i32[1, seq_len]"},
      {"argmax_keepdim",
       "argmax",
       {f16({1, S, 113})},
       {{"dim", 2}, {"keepdim", true}},
       "i32[1, seq_len, 1]"},
      {"argmax_no_dim", "argmax", {f32({113})}, {}, "!required attribute 'dim'"},
      {"argmax_rank0", "argmax", {f32({})}, {{"dim", 0}}, "!rank 0 is outside [1, 8]"},
      {"softmax_last",
       "softmax",
       {f32({1, 32, S, S})},
       {{"dim", -1}},
       "f32[1, 32, seq_len, seq_len]"},
      {"softmax_bad_dim", "softmax", {f32({11, 37})}, {{"dim", 2}}, "!out of range"},
      {"softmax_int", "softmax", {i32({11})}, {{"dim", 0}}, "!dtype i32"},
      {"softmax_scalar", "softmax", {scalar_f(1)}, {{"dim", 0}}, "!must be a tensor"},
      {"log_softmax_f16", "log_softmax", {f16({11, 37})}, {{"dim", 1}}, "f16[11, 37]"},
      {"log_softmax_dim_kind",
       "log_softmax",
       {f16({11, 37})},
       {{"dim", 1.0}},
       "!'dim' is float but must be int"},
  };
  // clang-format on
  return cases;
}

namespace {

class ElementwiseSchema : public ::testing::TestWithParam<SchemaCase> {};
TEST_P(ElementwiseSchema, Infers) { check_case(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Graph, ElementwiseSchema, ::testing::ValuesIn(elementwise_cases()),
                         case_name);

const char* const kFloatUnary[] = {"exp",  "log",  "sqrt", "rsqrt", "sigmoid",   "silu",
                                   "gelu", "tanh", "sin",  "cos",   "reciprocal"};

TEST(GraphUnarySchemas, KeepTypeForFloats) {
  for (const char* op : kFloatUnary) {
    SCOPED_TRACE(op);
    EXPECT_EQ(infer_text(op, {f32({113, 37})}), "f32[113, 37]");
    EXPECT_EQ(infer_text(op, {f16({1, kSeq, 11})}), "f16[1, seq_len, 11]");
    EXPECT_EQ(infer_text(op, {tensor(DType::bf16, {})}), "bf16[]");
  }
}

TEST(GraphUnarySchemas, RejectIntsBoolsScalarsAndArity) {
  for (const char* op : kFloatUnary) {
    SCOPED_TRACE(op);
    EXPECT_NE(infer_text(op, {i32({11})}).find("dtype i32 is not one of: f32, f16, bf16"),
              std::string::npos);
    EXPECT_NE(infer_text(op, {boolean({11})}).find("dtype bool"), std::string::npos);
    EXPECT_NE(infer_text(op, {scalar_f(1)}).find("must be a tensor"), std::string::npos);
    EXPECT_NE(infer_text(op, {f32({3}), f32({3})}).find("expects inputs (x)"), std::string::npos);
  }
}

}  // namespace
}  // namespace wgx::graph::testing
