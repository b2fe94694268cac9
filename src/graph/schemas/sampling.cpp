// sample_token(logits [1, V] f32, sampling [8] i32, position) -> i32 [1, 1]: the next token
// picked from one row of logits on the device. `sampling` holds the settings as words (top_k,
// then 1 / temperature, top_p and min_p as f32 bits, the seed's low and high halves, two zeros;
// ops/sampling/sample_params.h writes them): top_k 0 is greedy (the largest logit, the lowest
// index on ties, as argmax); 1 to 128 draws from the top_k largest logits times 1 / temperature,
// cut by top_p and min_p, with a uniform number from the seed and `position` (the step's
// input_pos), so a draw is the same for the same logits, settings and position. -1 where no
// logit can be picked (all NaN; sampling also skips infinities).
#include "graph/error.h"
#include "graph/schemas/families.h"
#include "graph/schemas/infer_util.h"
#include "graph/text.h"

namespace wgx::graph::schemas {

namespace {

OpSchema sample_token() {
  OpSchema s;
  s.name = "sample_token";
  s.inputs = {{.name = "logits", .dtypes = DTypeSet{DType::f32}, .min_rank = 2, .max_rank = 2},
              {.name = "sampling", .dtypes = DTypeSet{DType::i32}, .min_rank = 1, .max_rank = 1},
              {.name = "position", .dtypes = kIndexTypes, .max_rank = 0, .scalar_ok = true}};
  s.infer = [](const InferContext& ctx) {
    const Shape& logits = ctx.shape(0);
    if (!logits[0].is_const(1) || !logits[1].is_const() || logits[1].value() < 1) {
      throw GraphError(str("logits must be [1, vocab] with a constant vocab, not ", shape_text(ctx, logits)));
    }
    if (!ctx.shape(1)[0].is_const(8)) {
      throw GraphError(str("sampling must hold 8 words, not ", shape_text(ctx, ctx.shape(1))));
    }
    return InferResult::success(DType::i32, Shape{Dim(1), Dim(1)});
  };
  return s;
}

}  // namespace

void register_sampling(OpRegistry& r) { r.add(sample_token()); }

}  // namespace wgx::graph::schemas
