// The transformer ops: rotary embeddings, the SwiGLU gate, the residual add fused with RMSNorm,
// the fused QKV projection, KV cache updates (alone or fused with rope and the q/k norms), and
// attention over an in-graph KV cache (alone or after that fused update).
//
// Layouts: activations per token are [batch, seq, heads, head_dim] (what a projection followed
// by a reshape gives); caches are [batch, kv_heads, max_seq, head_dim]. `input_pos` (a Sym) is
// the position of the first new token; token s of the step sits at input_pos + s.
// The _rows ops (continuous batching) take a step of R rows, each one token of some sequence:
// activations [1, R, heads, head_dim], caches [slots, kv_heads, max_seq, head_dim] (a slot per
// sequence), and `rows` (i32 [R, 2]) giving each row's (slot, position).
#include "graph/error.h"
#include "graph/schemas/families.h"
#include "graph/schemas/infer_util.h"
#include "graph/text.h"

namespace wgx::graph::schemas {

namespace {

InputSpec position_input() {
  return {.name = "input_pos", .dtypes = kIndexTypes, .max_rank = 0, .scalar_ok = true};
}

void require_float_match(const InferContext& ctx, size_t a, size_t b) {
  if (ctx.dtype(a) != ctx.dtype(b)) {
    throw GraphError(str("input ", b, " is ", ctx.dtype(b), " but input ", a, " is ", ctx.dtype(a)));
  }
}

// The attributes of rotary embeddings (rope and rope_update_cache). layout "rotate_half" pairs
// channel i with i + D/2 (Hugging Face); "interleaved" pairs 2i, 2i+1. scaling "llama3" applies
// Llama 3.1's frequency scaling (factor, low/high_freq_factor, original_max_position).
std::vector<AttrSpec> rope_attrs() {
  return {AttrSpec::defaulted("theta", 10000.0),
          AttrSpec::defaulted("layout", "rotate_half"),
          AttrSpec::defaulted("scaling", "none"),
          AttrSpec::defaulted("factor", 8.0),
          AttrSpec::defaulted("low_freq_factor", 1.0),
          AttrSpec::defaulted("high_freq_factor", 4.0),
          AttrSpec::defaulted("original_max_position", int64_t{8192})};
}

// Throws GraphError unless the rope attributes and the head_dim of input `x` ([B, S, H, D]) fit.
void check_rope(const InferContext& ctx, size_t x) {
  const Dim& d = ctx.shape(x)[3];
  if (!d.is_const() || d.value() % 2 != 0) throw GraphError("head_dim must be a constant even size");
  const std::string& layout = ctx.attr_string("layout");
  if (layout != "rotate_half" && layout != "interleaved") {
    throw GraphError(str("layout is \"", layout, "\", not \"rotate_half\" or \"interleaved\""));
  }
  const std::string& scaling = ctx.attr_string("scaling");
  if (scaling != "none" && scaling != "llama3") {
    throw GraphError(str("scaling is \"", scaling, "\", not \"none\" or \"llama3\""));
  }
  if (!(ctx.attr_float("theta") > 0)) throw GraphError("theta must be > 0");
}

// Throws GraphError unless input `value` ([B, S, H, D]) fits into input `cache` ([B, H, MaxS, D]).
void check_cache_fit(const InferContext& ctx, size_t cache, size_t value) {
  const Shape& c = ctx.shape(cache);
  const Shape& v = ctx.shape(value);
  if (c[0] != v[0] || c[1] != v[2] || c[3] != v[3]) {
    throw GraphError(str("value ", shape_text(ctx, v), " does not fit cache ", shape_text(ctx, c),
                         " ([B, S, H, D] into [B, H, MaxS, D])"));
  }
  if (!c[2].is_const()) throw GraphError("the cache's max_seq must be a constant");
  if (v[1].max_value(ctx.syms()) > c[2].value()) throw GraphError("more new tokens than the cache holds");
}

// rows (i32 [R, 2]): input `rows` of a _rows op, whose R is input 0's (q [1, R, H, D]) rows.
InputSpec rows_input() { return {.name = "rows", .dtypes = DTypeSet{DType::i32}, .min_rank = 2, .max_rank = 2}; }

// Throws GraphError unless q (input 0) is one batch of R rows and input `rows` is [R, 2].
void check_rows(const InferContext& ctx, size_t rows) {
  const Shape& q = ctx.shape(0);
  const Shape& r = ctx.shape(rows);
  if (!q[0].is_const(1)) throw GraphError(str("q ", shape_text(ctx, q), " must be [1, R, H, D]"));
  if (r[0] != q[1] || !r[1].is_const(2)) {
    throw GraphError(str("rows ", shape_text(ctx, r), " must be [R, 2] with q's R ", to_string(q[1], &ctx.syms())));
  }
}

// Throws GraphError unless input `value` ([1, R, H, D]) fits the slots of input `cache`
// ([S, H, MaxS, D], S and MaxS constants).
void check_slot_cache_fit(const InferContext& ctx, size_t cache, size_t value) {
  const Shape& c = ctx.shape(cache);
  const Shape& v = ctx.shape(value);
  if (c[1] != v[2] || c[3] != v[3]) {
    throw GraphError(str("value ", shape_text(ctx, v), " does not fit cache ", shape_text(ctx, c),
                         " ([1, R, H, D] into [S, H, MaxS, D])"));
  }
  if (!c[0].is_const() || !c[2].is_const()) throw GraphError("the cache's slots and max_seq must be constants");
}

// rope(x [B, S, H, D], input_pos): rotates pairs of channels by position * frequency.
OpSchema rope() {
  OpSchema s;
  s.name = "rope";
  s.inputs = {{.name = "x", .dtypes = kFloatTypes, .min_rank = 4, .max_rank = 4}, position_input()};
  s.attrs = rope_attrs();
  s.infer = [](const InferContext& ctx) {
    check_rope(ctx, 0);
    return InferResult::success(ctx.type(0));
  };
  return s;
}

// swiglu(gate, up) = silu(gate) * up, elementwise over equal shapes.
OpSchema swiglu() {
  OpSchema s;
  s.name = "swiglu";
  s.inputs = {{.name = "gate", .dtypes = kFloatTypes, .min_rank = 1},
              {.name = "up", .dtypes = kFloatTypes, .min_rank = 1}};
  s.infer = [](const InferContext& ctx) {
    require_float_match(ctx, 0, 1);
    if (ctx.shape(0) != ctx.shape(1)) {
      return InferResult::fail(str("gate ", shape_text(ctx, ctx.shape(0)), " and up ",
                                   shape_text(ctx, ctx.shape(1)), " differ"));
    }
    return InferResult::success(ctx.type(0));
  };
  return s;
}

// add_rms_norm(x, residual, weight) -> (rms_norm(x + residual) * weight, x + residual).
OpSchema add_rms_norm() {
  OpSchema s;
  s.name = "add_rms_norm";
  s.inputs = {{.name = "x", .dtypes = kFloatTypes, .min_rank = 1},
              {.name = "residual", .dtypes = kFloatTypes, .min_rank = 1},
              {.name = "weight", .dtypes = kFloatTypes, .min_rank = 1, .max_rank = 1}};
  s.num_outputs = 2;
  s.attrs = {AttrSpec::defaulted("eps", 1e-6)};
  s.infer = [](const InferContext& ctx) {
    require_float_match(ctx, 0, 1);
    require_float_match(ctx, 0, 2);
    if (ctx.shape(0) != ctx.shape(1)) return InferResult::fail("x and residual have different shapes");
    if (ctx.shape(2)[0] != ctx.shape(0).back()) return InferResult::fail("weight does not match x's last dim");
    if (!(ctx.attr_float("eps") >= 0)) return InferResult::fail("eps must be >= 0");
    InferResult r;
    r.outputs = {ctx.type(0), ctx.type(0)};
    return r;
  };
  return s;
}

// linear_qkv(x [..., K], weight [Nq + Nk + Nv, K], [bias]) -> q [..., Nq], k [..., Nk],
// v [..., Nv]: the three projections as one product, written to three outputs.
OpSchema linear_qkv() {
  OpSchema s;
  s.name = "linear_qkv";
  s.inputs = {{.name = "x", .dtypes = kFloatTypes, .min_rank = 1},
              {.name = "weight", .dtypes = kWeightTypes, .min_rank = 2, .max_rank = 2},
              {.name = "bias", .dtypes = kFloatTypes, .min_rank = 1, .max_rank = 1, .optional = true}};
  s.num_outputs = 3;
  s.attrs = {AttrSpec::required("splits", AttrKind::Ints)};
  s.infer = [](const InferContext& ctx) {
    const TensorType& w = ctx.type(1);
    if (w.dtype != DType::q4gsw && w.dtype != ctx.dtype(0)) {
      return InferResult::fail(str("weight is ", w.dtype, " but x is ", ctx.dtype(0)));
    }
    if (ctx.shape(0).back() != w.shape[1]) return InferResult::fail("x's last dim does not match the weight's K");
    const std::vector<int64_t>& splits = ctx.attr_ints("splits");
    if (splits.size() != 3) return InferResult::fail("splits must list 3 sizes (q, k, v)");
    int64_t total = 0;
    for (int64_t n : splits) {
      if (n <= 0) return InferResult::fail("splits must be positive");
      total += n;
    }
    if (!w.shape[0].is_const(total)) {
      return InferResult::fail(str("splits add up to ", total, " but the weight has ",
                                   to_string(w.shape[0], &ctx.syms()), " rows"));
    }
    if (ctx.num_inputs() > 2) {
      require_float_match(ctx, 0, 2);
      if (!ctx.shape(2)[0].is_const(total)) return InferResult::fail("bias does not match the weight's rows");
    }
    InferResult r;
    for (int64_t n : splits) {
      Shape out = ctx.shape(0);
      out.back() = Dim(n);
      r.outputs.push_back(TensorType{ctx.dtype(0), std::move(out), {}});
    }
    return r;
  };
  return s;
}

// add_rms_norm_<product>(x, residual, norm_weight, <the product's inputs after x>) ->
// (<the product's outputs>, x + residual): add_rms_norm feeding a product (linear, linear_qkv,
// linear_swiglu), one node, so that a one-row step can normalize inside the product's kernel.
// The product takes rms_norm(x + residual) * norm_weight as its x; eps is add_rms_norm's.
OpSchema with_add_rms_norm(const OpSchema& product) {
  OpSchema s;
  s.name = "add_rms_norm_" + product.name;
  s.inputs = {{.name = "x", .dtypes = kFloatTypes, .min_rank = 1},
              {.name = "residual", .dtypes = kFloatTypes, .min_rank = 1},
              {.name = "norm_weight", .dtypes = kFloatTypes, .min_rank = 1, .max_rank = 1}};
  s.inputs.insert(s.inputs.end(), product.inputs.begin() + 1, product.inputs.end());
  s.num_outputs = product.num_outputs + 1;
  s.attrs = product.attrs;
  s.attrs.push_back(AttrSpec::defaulted("eps", 1e-6));
  s.infer = [infer = product.infer](const InferContext& ctx) {
    require_float_match(ctx, 0, 1);
    require_float_match(ctx, 0, 2);
    if (ctx.shape(0) != ctx.shape(1)) return InferResult::fail("x and residual have different shapes");
    if (ctx.shape(2)[0] != ctx.shape(0).back()) return InferResult::fail("norm_weight does not match x's last dim");
    if (!(ctx.attr_float("eps") >= 0)) return InferResult::fail("eps must be >= 0");
    std::vector<const Value*> inner{&ctx.value(0)};
    for (size_t i = 3; i < ctx.num_inputs(); ++i) inner.push_back(&ctx.value(i));
    InferResult r = infer(InferContext(inner, ctx.attrs(), ctx.syms()));
    if (r.ok()) r.outputs.push_back(ctx.type(0));
    return r;
  };
  return s;
}

// update_cache(cache [B, H, MaxS, D], value [B, S, H, D], input_pos) -> the cache with rows
// input_pos .. input_pos + S - 1 replaced (the value converted to the cache's dtype). The result
// is meant to be written back with a mutation; kernels update the cache where it lies.
OpSchema update_cache() {
  OpSchema s;
  s.name = "update_cache";
  s.inputs = {{.name = "cache", .dtypes = kFloatTypes, .min_rank = 4, .max_rank = 4},
              {.name = "value", .dtypes = kFloatTypes, .min_rank = 4, .max_rank = 4},
              position_input()};
  s.infer = [](const InferContext& ctx) {
    check_cache_fit(ctx, 0, 1);
    return InferResult::success(ctx.type(0));
  };
  return s;
}

// The schema rope_update_cache and rope_update_cache_rows share: q, k, v, the caches, input 5
// (`position`: input_pos or rows), the optional norm weights; rope's attributes and eps.
// `fit` checks how k fits the caches and input 5.
OpSchema rope_cache_schema(std::string op, InputSpec position, void (*fit)(const InferContext&)) {
  OpSchema s;
  s.name = std::move(op);
  auto tensor4 = [](const char* name) {
    return InputSpec{.name = name, .dtypes = kFloatTypes, .min_rank = 4, .max_rank = 4};
  };
  auto norm_weight = [](const char* name) {
    return InputSpec{.name = name, .dtypes = kFloatTypes, .min_rank = 1, .max_rank = 1, .optional = true};
  };
  s.inputs = {tensor4("q"),       tensor4("k"),      tensor4("v"),
              tensor4("k_cache"), tensor4("v_cache"), std::move(position),
              norm_weight("q_norm_weight"), norm_weight("k_norm_weight")};
  s.num_outputs = 3;
  s.attrs = rope_attrs();
  s.attrs.push_back(AttrSpec::defaulted("eps", 1e-6));
  s.infer = [fit](const InferContext& ctx) {
    require_float_match(ctx, 0, 1);
    require_float_match(ctx, 0, 2);
    if (ctx.shape(1) != ctx.shape(2)) return InferResult::fail("k and v have different shapes");
    const Shape& q = ctx.shape(0);
    const Shape& k = ctx.shape(1);
    if (q[0] != k[0] || q[1] != k[1] || q[3] != k[3]) {
      return InferResult::fail(str("q ", shape_text(ctx, q), " and k ", shape_text(ctx, k),
                                   " differ in batch, seq or head_dim"));
    }
    check_rope(ctx, 0);
    if (ctx.type(3) != ctx.type(4)) return InferResult::fail("k_cache and v_cache differ");
    fit(ctx);
    if (ctx.num_inputs() == 7) return InferResult::fail("q_norm_weight and k_norm_weight come together");
    for (size_t i = 6; i < ctx.num_inputs(); ++i) {
      require_float_match(ctx, 0, i);
      if (ctx.shape(i)[0] != q[3]) return InferResult::fail(str("input ", i, " does not match head_dim"));
    }
    if (!(ctx.attr_float("eps") >= 0)) return InferResult::fail("eps must be >= 0");
    InferResult r;
    r.outputs = {ctx.type(0), ctx.type(3), ctx.type(4)};
    return r;
  };
  return s;
}

// rope_update_cache(q [B, S, Hq, D], k [B, S, Hkv, D], v [B, S, Hkv, D], k_cache [B, Hkv, MaxS, D],
// v_cache, input_pos [, q_norm_weight [D], k_norm_weight [D]]) -> (q', k_cache', v_cache'): the
// attention prologue after the q/k/v projection, as one op. With the norm weights (both or
// neither), q and k are first RMS-normalized per head over D (`eps`) and scaled by their weights
// (Qwen3). q and k are then rotated as rope rotates them (the same attributes); q' is the rotated
// q, and k_cache' and v_cache' are the caches with rows input_pos .. input_pos + S - 1 replaced by
// the rotated k and by v, as update_cache writes them. Each stage's result is rounded to q's dtype
// as the separate ops would round it. The caches' results are meant to be written back with
// mutations; kernels update both caches where they lie.
OpSchema rope_update_cache() {
  return rope_cache_schema("rope_update_cache", position_input(), [](const InferContext& ctx) {
    check_cache_fit(ctx, 3, 1);
  });
}

// rope_update_cache_rows(q [1, R, Hq, D], k [1, R, Hkv, D], v [1, R, Hkv, D],
// k_cache [S, Hkv, MaxS, D], v_cache, rows i32 [R, 2] [, q_norm_weight [D], k_norm_weight [D]])
// -> (q', k_cache', v_cache'): rope_update_cache's arithmetic and attributes for a step of rows
// of different sequences: row r at (slot, position) = rows[r] has its q and k normalized and
// rotated at that position, and its rotated k and its v written to cache row (slot, :, position).
// A row whose slot or position is out of the caches writes nothing and its q' is zeros. The
// caller keeps rows apart: no two rows write one (slot, position).
OpSchema rope_update_cache_rows() {
  return rope_cache_schema("rope_update_cache_rows", rows_input(), [](const InferContext& ctx) {
    check_rows(ctx, 5);
    check_slot_cache_fit(ctx, 3, 1);
  });
}

// The checks of the caches (inputs 1 and 2) and `scale` that sdpa_with_kv_cache and sdpa_rows
// make: "" or the error.
std::string sdpa_cache_error(const InferContext& ctx) {
  const Shape& q = ctx.shape(0);
  const Shape& k = ctx.shape(1);
  if (ctx.shape(2) != k || ctx.dtype(2) != ctx.dtype(1)) return "k_cache and v_cache differ";
  if (q[3] != k[3]) return "q and the cache differ in head_dim";
  if (!q[2].is_const() || !k[1].is_const() || k[1].value() == 0 || q[2].value() % k[1].value() != 0) {
    return "q heads must be a constant multiple of the cache's kv heads";
  }
  if (!k[2].is_const()) return "the cache's max_seq must be a constant";
  if (!(ctx.attr_float("scale") >= 0)) return "scale must be >= 0";
  return "";
}

// sdpa_with_kv_cache(q [B, S, Hq, D], k_cache [B, Hkv, MaxS, D], v_cache, input_pos) ->
// [B, S, Hq, D]: causal attention of each new token (at input_pos + s) over cache rows
// 0 .. input_pos + s, with grouped-query heads (Hq a multiple of Hkv). `scale` defaults to
// 1/sqrt(D) when 0.
OpSchema sdpa_with_kv_cache() {
  OpSchema s;
  s.name = "sdpa_with_kv_cache";
  s.inputs = {{.name = "q", .dtypes = kFloatTypes, .min_rank = 4, .max_rank = 4},
              {.name = "k_cache", .dtypes = kFloatTypes, .min_rank = 4, .max_rank = 4},
              {.name = "v_cache", .dtypes = kFloatTypes, .min_rank = 4, .max_rank = 4},
              position_input()};
  s.attrs = {AttrSpec::defaulted("scale", 0.0)};
  s.infer = [](const InferContext& ctx) {
    if (ctx.shape(0)[0] != ctx.shape(1)[0]) return InferResult::fail("q and the cache differ in batch");
    if (const std::string why = sdpa_cache_error(ctx); !why.empty()) return InferResult::fail(why);
    return InferResult::success(ctx.type(0));
  };
  return s;
}

// attention(q [B, S, Hq, D], k [B, Hkv, T, D], v [B, Hkv, T, D]) -> [B, S, Hq, D]: non-causal
// attention (an encoder's self-attention, a decoder's cross-attention): every query row over all
// T rows of k and v, grouped-query heads as sdpa_with_kv_cache's. `scale` defaults to 1/sqrt(D)
// when 0. T may be a SymInt.
OpSchema attention() {
  OpSchema s;
  s.name = "attention";
  s.inputs = {{.name = "q", .dtypes = kFloatTypes, .min_rank = 4, .max_rank = 4},
              {.name = "k", .dtypes = kFloatTypes, .min_rank = 4, .max_rank = 4},
              {.name = "v", .dtypes = kFloatTypes, .min_rank = 4, .max_rank = 4}};
  s.attrs = {AttrSpec::defaulted("scale", 0.0)};
  s.infer = [](const InferContext& ctx) {
    const Shape& q = ctx.shape(0);
    const Shape& k = ctx.shape(1);
    if (q[0] != k[0]) return InferResult::fail("q and k differ in batch");
    if (ctx.shape(2) != k || ctx.dtype(2) != ctx.dtype(1)) return InferResult::fail("k and v differ");
    if (q[3] != k[3]) return InferResult::fail("q and k differ in head_dim");
    if (k[2].is_const() && k[2].value() == 0) return InferResult::fail("k and v have no rows to attend to");
    if (!q[2].is_const() || !k[1].is_const() || k[1].value() == 0 || q[2].value() % k[1].value() != 0) {
      return InferResult::fail("q heads must be a constant multiple of k's heads");
    }
    if (!(ctx.attr_float("scale") >= 0)) return InferResult::fail("scale must be >= 0");
    return InferResult::success(ctx.type(0));
  };
  return s;
}

// sdpa_rows(q [1, R, Hq, D], k_cache [S, Hkv, MaxS, D], v_cache, rows i32 [R, 2]) -> [1, R, Hq, D]:
// sdpa_with_kv_cache for a step of rows of different sequences: row r at (slot, position) =
// rows[r] attends over rows 0 .. position of its slot, grouped-query heads as sdpa's (`scale`
// likewise). A row whose slot or position is out of the caches gives zeros.
OpSchema sdpa_rows() {
  OpSchema s = sdpa_with_kv_cache();
  s.name = "sdpa_rows";
  s.inputs.back() = rows_input();
  s.infer = [](const InferContext& ctx) {
    check_rows(ctx, 3);
    if (const std::string why = sdpa_cache_error(ctx); !why.empty()) return InferResult::fail(why);
    if (!ctx.shape(1)[0].is_const()) return InferResult::fail("the cache's slots must be a constant");
    return InferResult::success(ctx.type(0));
  };
  return s;
}

// rope_sdpa_with_kv_cache(q, k, v, k_cache, v_cache, input_pos [, q_norm_weight, k_norm_weight])
// -> (out [B, S, Hq, D], k_cache', v_cache'): rope_update_cache then sdpa_with_kv_cache over its
// results, as one op (a layer's attention after the q/k/v projection), so that a one-token step
// can rotate and write the new rows inside the attention kernel. Inputs and attributes are
// rope_update_cache's (rope's, eps) and sdpa's (scale); out is sdpa's of the rotated q over the
// updated caches, which are rope_update_cache's (meant to be written back with mutations).
OpSchema rope_sdpa_with_kv_cache() {
  const OpSchema rope = rope_update_cache();
  const OpSchema sdpa = sdpa_with_kv_cache();
  OpSchema s;
  s.name = "rope_sdpa_with_kv_cache";
  s.inputs = rope.inputs;
  s.num_outputs = 3;
  s.attrs = rope.attrs;
  s.attrs.insert(s.attrs.end(), sdpa.attrs.begin(), sdpa.attrs.end());
  s.infer = [rope = rope.infer, sdpa = sdpa.infer](const InferContext& ctx) {
    InferResult r = rope(ctx);
    if (!r.ok()) return r;
    // rope_update_cache's results have the types of q and the caches: sdpa sees those inputs.
    const std::vector<const Value*> inner{&ctx.value(0), &ctx.value(3), &ctx.value(4), &ctx.value(5)};
    InferResult out = sdpa(InferContext(inner, ctx.attrs(), ctx.syms()));
    if (!out.ok()) return out;
    r.outputs[0] = out.outputs[0];
    return r;
  };
  return s;
}

// rope_sdpa_linear(q, k, v, k_cache, v_cache, input_pos, weight [, q_norm_weight, k_norm_weight])
// -> (attn [B, S, Hq * D], k_cache', v_cache', out [B, S, N]): rope_sdpa_with_kv_cache (the
// inputs but the weight, the attributes) with its output's heads merged (attn), then
// linear(attn, weight) (out): a layer's attention and its output projection as one op, so that a
// one-token step can merge the split attention's partial results inside the projection instead
// of a pass of its own. attn is a result as well (the attention output as the separate ops give
// it), and the caches are written back with mutations as rope_sdpa_with_kv_cache's are.
OpSchema rope_sdpa_linear(const OpSchema& attention, const OpSchema& linear) {
  OpSchema s;
  s.name = "rope_sdpa_linear";
  s.inputs = attention.inputs;
  s.inputs.insert(s.inputs.begin() + 6, linear.inputs[1]);
  s.num_outputs = 4;
  s.attrs = attention.attrs;
  s.infer = [sdpa = attention.infer, product = linear.infer](const InferContext& ctx) {
    std::vector<const Value*> inner;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      if (i != 6) inner.push_back(&ctx.value(i));
    }
    InferResult r = sdpa(InferContext(inner, ctx.attrs(), ctx.syms()));
    if (!r.ok()) return r;
    const Shape& q = ctx.shape(0);
    if (!q[3].is_const()) return InferResult::fail("head_dim must be a constant");
    Value attn;
    attn.type.dtype = r.outputs[0].dtype;
    attn.type.shape = {q[0], q[1], Dim(q[2].value() * q[3].value())};
    const std::vector<const Value*> product_inputs{&attn, &ctx.value(6)};
    InferResult out = product(InferContext(product_inputs, {}, ctx.syms()));
    if (!out.ok()) return out;
    r.outputs[0] = attn.type;
    r.outputs.push_back(out.outputs[0]);
    return r;
  };
  return s;
}

// sdpa_rows_linear(q [1, R, Hq, D], k_cache, v_cache, rows, weight [N, Hq * D]) -> (attn
// [1, R, Hq * D], out [1, R, N]): sdpa_rows (its inputs, `scale`) with its output's heads merged
// (attn), then linear(attn, weight) (out): continuous batching's attention and output projection
// as one op, so that the attention can hand the projection its x in a form of its own (int8) as
// well as attn, a result like the separate ops give it.
OpSchema sdpa_rows_linear(const OpSchema& attention, const OpSchema& linear) {
  OpSchema s;
  s.name = "sdpa_rows_linear";
  s.inputs = attention.inputs;
  s.inputs.push_back(linear.inputs[1]);
  s.num_outputs = 2;
  s.attrs = attention.attrs;
  s.infer = [sdpa = attention.infer, product = linear.infer](const InferContext& ctx) {
    const std::vector<const Value*> inner{&ctx.value(0), &ctx.value(1), &ctx.value(2), &ctx.value(3)};
    InferResult r = sdpa(InferContext(inner, ctx.attrs(), ctx.syms()));
    if (!r.ok()) return r;
    const Shape& q = ctx.shape(0);
    if (!q[2].is_const() || !q[3].is_const()) return InferResult::fail("the heads and head_dim must be constants");
    Value attn;
    attn.type.dtype = r.outputs[0].dtype;
    attn.type.shape = {q[0], q[1], Dim(q[2].value() * q[3].value())};
    const std::vector<const Value*> product_inputs{&attn, &ctx.value(4)};
    InferResult out = product(InferContext(product_inputs, {}, ctx.syms()));
    if (!out.ok()) return InferResult::fail("weight: " + out.error);
    r.outputs[0] = attn.type;
    r.outputs.push_back(out.outputs[0]);
    return r;
  };
  return s;
}

// linear_swiglu_linear(x [..., in], gate_up_weight [2n, in], down_weight [out, n]) ->
// (act [..., n], out [..., out]): linear_swiglu(x, gate_up_weight), then linear(act,
// down_weight): the gated MLP as one op (no biases), so that a one-row step can hand act from
// the first product to the second in a form of its own (int8) as well as the f32 act, a result
// like the separate ops give it.
OpSchema linear_swiglu_linear(const OpSchema& swiglu, const OpSchema& linear) {
  OpSchema s;
  s.name = "linear_swiglu_linear";
  s.inputs = {swiglu.inputs[0], swiglu.inputs[1], linear.inputs[1]};
  s.inputs[1].name = "gate_up_weight";
  s.inputs[2].name = "down_weight";
  s.num_outputs = 2;
  s.infer = [gate_up = swiglu.infer, down = linear.infer](const InferContext& ctx) {
    const std::vector<const Value*> first{&ctx.value(0), &ctx.value(1)};
    InferResult r = gate_up(InferContext(first, {}, ctx.syms()));
    if (!r.ok()) return r;
    Value act;
    act.type = r.outputs[0];
    const std::vector<const Value*> second{&act, &ctx.value(2)};
    InferResult out = down(InferContext(second, {}, ctx.syms()));
    if (!out.ok()) return InferResult::fail("down_weight: " + out.error);
    r.outputs.push_back(out.outputs[0]);
    return r;
  };
  return s;
}

}  // namespace

void register_transformer(OpRegistry& r) {
  r.add(rope());
  r.add(swiglu());
  r.add(add_rms_norm());
  r.add(linear_qkv());
  // nn's linear_swiglu is registered before this family.
  r.add(with_add_rms_norm(*r.find("linear")));
  r.add(with_add_rms_norm(*r.find("linear_qkv")));
  r.add(with_add_rms_norm(*r.find("linear_swiglu")));
  r.add(linear_swiglu_linear(*r.find("linear_swiglu"), *r.find("linear")));
  r.add(with_add_rms_norm(*r.find("linear_swiglu_linear")));
  r.add(update_cache());
  r.add(rope_update_cache());
  r.add(rope_update_cache_rows());
  r.add(sdpa_with_kv_cache());
  r.add(sdpa_rows());
  r.add(attention());
  r.add(rope_sdpa_with_kv_cache());
  // nn's linear is registered before this family.
  r.add(rope_sdpa_linear(rope_sdpa_with_kv_cache(), *r.find("linear")));
  r.add(sdpa_rows_linear(sdpa_rows(), *r.find("linear")));
}

}  // namespace wgx::graph::schemas
