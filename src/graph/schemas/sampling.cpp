// sample_token(logits [1, V] f32, sampling [8] i32, position) -> i32 [1, 1]: the next token
// picked from one row of logits on the device. `sampling` holds the settings as words (top_k,
// then 1 / temperature, top_p and min_p as f32 bits, the seed's low and high halves, a repetition
// penalty and its inverse as f32 bits; ops/sampling/sample_params.h writes them): top_k 0 is
// greedy (the largest logit, the lowest index on ties, as argmax); 1 to 128 draws from the top_k
// largest logits times 1 / temperature, cut by top_p and min_p, with a uniform number from the
// seed and `position` (the step's input_pos), so a draw is the same for the same logits, settings
// and position. -1 where no logit can be picked (all NaN; sampling also skips infinities).
// sample_token leaves the penalty words unused.
//
// sample_token_penalized(logits, sampling, position, seen [ceil(V / 32)] i32) -> (token, seen'):
// the same after the penalty words (0: none) are applied to the logits of the tokens `seen`
// holds (token t: bit t % 32 of word t / 32), a logit below 0 times the penalty, others times its
// inverse; seen' is seen with the picked token added (a decoder keeps it as state: the tokens of
// its context).
//
// sample_rows(logits [R, V] f32, sampling [R, 8] i32, counters [R] i32) -> i32 [R]: sample_token
// for each row, with that row's words and its counter as the position (a decoder's rows of
// several sequences: each row's token depends on that row alone). No penalty: words 6 and 7 are
// unused.
//
// sample_rows_penalized(logits, sampling, counters, seen [S, ceil(V / 32)] i32, slots [R] i32)
// -> (tokens [R], seen'): sample_rows with a seen set per slot (a decoder's sequence in each):
// row r is penalized by its words 6 and 7 against row slots[r] of seen, and its token joins that
// row; a slot outside [0, S) has no seen set (no penalty, nothing joins).
#include "graph/error.h"
#include "graph/schemas/families.h"
#include "graph/schemas/infer_util.h"
#include "graph/text.h"

namespace wgx::graph::schemas {

namespace {

// The logits' vocabulary, after checking the first two inputs.
int64_t check_logits_and_words(const InferContext& ctx) {
  const Shape& logits = ctx.shape(0);
  if (!logits[0].is_const(1) || !logits[1].is_const() || logits[1].value() < 1) {
    throw GraphError(str("logits must be [1, vocab] with a constant vocab, not ", shape_text(ctx, logits)));
  }
  if (!ctx.shape(1)[0].is_const(8)) {
    throw GraphError(str("sampling must hold 8 words, not ", shape_text(ctx, ctx.shape(1))));
  }
  return logits[1].value();
}

OpSchema sample_token() {
  OpSchema s;
  s.name = "sample_token";
  s.inputs = {{.name = "logits", .dtypes = DTypeSet{DType::f32}, .min_rank = 2, .max_rank = 2},
              {.name = "sampling", .dtypes = DTypeSet{DType::i32}, .min_rank = 1, .max_rank = 1},
              {.name = "position", .dtypes = kIndexTypes, .max_rank = 0, .scalar_ok = true}};
  s.infer = [](const InferContext& ctx) {
    check_logits_and_words(ctx);
    return InferResult::success(DType::i32, Shape{Dim(1), Dim(1)});
  };
  return s;
}

OpSchema sample_token_penalized() {
  OpSchema s = sample_token();
  s.name = "sample_token_penalized";
  s.inputs.push_back({.name = "seen", .dtypes = DTypeSet{DType::i32}, .min_rank = 1, .max_rank = 1});
  s.num_outputs = 2;
  s.infer = [](const InferContext& ctx) {
    const int64_t vocab = check_logits_and_words(ctx);
    const int64_t words = (vocab + 31) / 32;
    if (!ctx.shape(3)[0].is_const(words)) {
      throw GraphError(str("seen must hold ", words, " words (a bit per token of ", vocab, "), not ",
                           shape_text(ctx, ctx.shape(3))));
    }
    InferResult r;
    r.outputs = {TensorType{DType::i32, Shape{Dim(1), Dim(1)}, {}}, TensorType{DType::i32, Shape{Dim(words)}, {}}};
    return r;
  };
  return s;
}

OpSchema sample_rows() {
  OpSchema s;
  s.name = "sample_rows";
  s.inputs = {{.name = "logits", .dtypes = DTypeSet{DType::f32}, .min_rank = 2, .max_rank = 2},
              {.name = "sampling", .dtypes = DTypeSet{DType::i32}, .min_rank = 2, .max_rank = 2},
              {.name = "counters", .dtypes = DTypeSet{DType::i32}, .min_rank = 1, .max_rank = 1}};
  s.infer = [](const InferContext& ctx) {
    const Shape& logits = ctx.shape(0);
    if (!logits[1].is_const() || logits[1].value() < 1) {
      throw GraphError(str("logits must be [rows, vocab] with a constant vocab, not ", shape_text(ctx, logits)));
    }
    const Shape& words = ctx.shape(1);
    if (words[0] != logits[0] || !words[1].is_const(8)) {
      throw GraphError(str("sampling must be [rows, 8] for logits ", shape_text(ctx, logits), ", not ",
                           shape_text(ctx, words)));
    }
    if (ctx.shape(2)[0] != logits[0]) {
      throw GraphError(str("counters must be [rows] for logits ", shape_text(ctx, logits), ", not ",
                           shape_text(ctx, ctx.shape(2))));
    }
    return InferResult::success(DType::i32, Shape{logits[0]});
  };
  return s;
}

OpSchema sample_rows_penalized() {
  OpSchema s = sample_rows();
  s.name = "sample_rows_penalized";
  s.inputs.push_back({.name = "seen", .dtypes = DTypeSet{DType::i32}, .min_rank = 2, .max_rank = 2});
  s.inputs.push_back({.name = "slots", .dtypes = DTypeSet{DType::i32}, .min_rank = 1, .max_rank = 1});
  s.num_outputs = 2;
  const auto rows = s.infer;
  s.infer = [rows](const InferContext& ctx) {
    InferResult r = rows(ctx);
    const int64_t vocab = ctx.shape(0)[1].value();
    const int64_t words = (vocab + 31) / 32;
    const Shape& seen = ctx.shape(3);
    if (!seen[0].is_const() || !seen[1].is_const(words)) {
      throw GraphError(str("seen must be [slots, ", words, "] (a bit per token of ", vocab,
                           ") with a constant count of slots, not ", shape_text(ctx, seen)));
    }
    if (ctx.shape(4)[0] != ctx.shape(0)[0]) {
      throw GraphError(str("slots must be [rows] for logits ", shape_text(ctx, ctx.shape(0)), ", not ",
                           shape_text(ctx, ctx.shape(4))));
    }
    r.outputs.push_back(TensorType{DType::i32, seen, {}});
    return r;
  };
  return s;
}

}  // namespace

void register_sampling(OpRegistry& r) {
  r.add(sample_token());
  r.add(sample_token_penalized());
  r.add(sample_rows());
  r.add(sample_rows_penalized());
}

}  // namespace wgx::graph::schemas
