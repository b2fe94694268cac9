#include "models/decoder.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "graph/builder.h"
#include "models/config.h"
#include "models/encode.h"
#include "models/error.h"
#include "models/progress.h"
#include "ops/sampling/sample_params.h"

namespace wgx::models {

namespace {

using graph::DType;
using graph::Shape;
using graph::ValueId;

constexpr std::string_view kLayerPrefix = "model.layers.";
std::string layer_tensor(int64_t layer, const char* suffix) {
  return std::string(kLayerPrefix) + std::to_string(layer) + "." + suffix;
}

std::string label(int64_t layer, const char* what) { return "layers." + std::to_string(layer) + "." + what; }

// A product's input: h itself, or the block output x still to be added to the residual stream
// and normalized (add_rms_norm), which the product's node does first (add_rms_norm_<product>).
// `doubled`: x is the residual stream itself (layer 0's input norm: see Decoder::build).
struct Normed {
  ValueId h = graph::kNoValue;
  ValueId x = graph::kNoValue, residual = graph::kNoValue, weight = graph::kNoValue;
  bool doubled = false;
};

// One block of rows of a concatenated weight, and where its expected shape comes from.
struct Part {
  std::string tensor;
  int64_t rows = 0;
  const char* why = "";
};

class Decoder {
 public:
  Decoder(const ModelConfig& config, const WeightSource& weights, const LoadOptions& options,
          const BuiltModel* reuse = nullptr, int64_t slots = 0)
      : c_(config), w_(weights), o_(options), reuse_(reuse), slots_(slots) {
    if (reuse_) {
      // The weights are the built model's constants, by name: no conversion, the same bytes;
      // the sizes and formats are the ones it was built with.
      b_.weights() = reuse_->weights;
      const graph::Graph& g = reuse_->graph;
      for (const graph::Constant& k : g.constants) reused_[k.name] = &k;
      for (const graph::SymInt& sym : g.syms) {
        if (sym.name == "input_pos") o_.max_seq = sym.max + 1;
        if (sym.name == "seq") o_.max_prefill = sym.max;
      }
      for (const graph::MutableBuffer& buf : g.buffers) {
        if (buf.name == label(0, "k_cache")) o_.half_kv_cache = g.type(buf.value).dtype == DType::f16;
      }
      const auto embed = reused_.find("model.embed_tokens.weight");
      if (embed == reused_.end()) throw ModelError("", "model.embed_tokens.weight", "the model to batch has no embedding");
      const DType table = g.type(embed->second->value).dtype;
      o_.weights = table == DType::q4gsw ? WeightFormat::Q4 : table == DType::f16 ? WeightFormat::F16 : WeightFormat::F32;
    }
    if (o_.max_seq < 1 || o_.max_prefill < 1) throw ModelError("", "LoadOptions", "max_seq and max_prefill must be >= 1");
    max_seq_ = std::min(o_.max_seq, c_.max_position_embeddings);
    max_prefill_ = std::min(o_.max_prefill, max_seq_);
    act_ = o_.weights == WeightFormat::F16 ? DType::f16 : DType::f32;
    cache_ = o_.half_kv_cache ? DType::f16 : DType::f32;
  }

  BuiltModel build() { return slots_ > 0 ? build_rows() : build_sequence(); }

 private:
  BuiltModel build_sequence() {
    Progress progress(o_.progress, "converting");
    seq_ = b_.sym("seq", 1, max_prefill_);
    pos_ = b_.sym_value(b_.sym("input_pos", 0, max_seq_ - 1));
    const ValueId tokens = b_.input("tokens", DType::i32, {1, seq_});

    const ValueId table = embedding_table();
    const auto [pending, residual] = layers(progress, table, tokens);

    progress.update("lm_head");
    const ValueId final_norm = norm_weight("model.norm.weight");
    ValueId logits = graph::kNoValue;
    if (o_.all_logits) {
      const ValueId out = add_norm(pending, residual, final_norm, "final_norm").first;
      logits = b_.op1("linear", {out, lm_head(table)}, {}, "lm_head");
    } else {
      // Only the last position's logits are needed to sample; the product over the vocabulary
      // is the largest of the step, so it runs on one row, the final norm in the same node
      // (add_rms_norm_linear: at one row, one dispatch).
      auto last = [&](ValueId v, const char* name) {
        return b_.op1("select", {v}, {{"dim", 1}, {"index", -1}}, name);
      };
      logits = b_.op("add_rms_norm_linear",
                     {last(pending, "last_token"), last(residual, "last_token.residual"), final_norm, lm_head(table)},
                     {{"eps", c_.rms_norm_eps}}, "lm_head")[0];
    }
    if (act_ != DType::f32) logits = b_.op1("to_copy", {logits}, {{"dtype", "f32"}}, "logits.cast");
    b_.output("logits", logits);
    // The next token picked on the device (greedy, or drawn as the "sampling" words say): shaped
    // like a one-token "tokens" input, so a step can feed the next without the host
    // (runtime::Program::feed_from).
    ValueId last = logits;
    if (o_.all_logits) last = b_.op1("select", {logits}, {{"dim", 1}, {"index", -1}}, "next_token.last");
    const ValueId sampling = b_.input("sampling", DType::i32, {8});
    // The tokens a repetition penalty applies to, a bit each.
    const ValueId seen =
        b_.mutable_buffer("seen_tokens", DType::i32, {ops::sampling::seen_words(c_.vocab_size)});
    const std::vector<ValueId> pick =
        b_.op("sample_token_penalized", {last, sampling, pos_, seen}, {}, "next_token");
    b_.mutate(seen, pick[1]);
    b_.output("next_token", pick[0]);

    return finish(progress);
  }

  // The rows graph: a step's rows are tokens of up to `slots` sequences, each row at its own
  // (slot, position) (input "rows"); the caches hold a slot per sequence; logits and the next
  // token come for the rows that "logit_rows" names (each sequence's last row this step), each
  // picked on the device as its 8 words of "sampling" say (greedy, or drawn with the counter
  // "counters" gives it), after a repetition penalty against the seen set of the slot that
  // "pick_slots" names (sample_rows_penalized; "seen_tokens" holds a set per slot).
  BuiltModel build_rows() {
    Progress progress(o_.progress, "converting");
    seq_ = b_.sym("rows", 1, max_prefill_);
    // At least 64 picks (or a prefill step's rows), so that a step of few sequences can pad its
    // logit rows (llm::Batch) and text is scored 64 positions a step (llm::log_probs).
    const graph::SymId picks = b_.sym("picks", 1, std::min(std::max<int64_t>(slots_, 64), max_prefill_));
    const ValueId tokens = b_.input("tokens", DType::i32, {1, seq_});
    rows_ = b_.input("rows", DType::i32, {seq_, 2});
    const ValueId logit_rows = b_.input("logit_rows", DType::i32, {picks});
    const ValueId sampling = b_.input("sampling", DType::i32, {picks, 8});
    const ValueId counters = b_.input("counters", DType::i32, {picks});
    const ValueId pick_slots = b_.input("pick_slots", DType::i32, {picks});

    const ValueId table = embedding_table();
    const auto [pending, residual] = layers(progress, table, tokens);

    progress.update("lm_head");
    // The rows whose logits are asked for, gathered as an embedding lookup of the activations.
    auto pick = [&](ValueId v, const char* name) {
      const ValueId flat = b_.op1("reshape", {v}, {{"shape", Shape{seq_, c_.hidden_size}}});
      const ValueId rows = b_.op1("embedding", {flat, logit_rows}, {}, name);
      return b_.op1("reshape", {rows}, {{"shape", Shape{1, picks, c_.hidden_size}}});
    };
    const ValueId final_norm = norm_weight("model.norm.weight");
    ValueId logits = b_.op("add_rms_norm_linear",
                           {pick(pending, "logit_rows"), pick(residual, "logit_rows.residual"), final_norm, lm_head(table)},
                           {{"eps", c_.rms_norm_eps}}, "lm_head")[0];
    if (act_ != DType::f32) logits = b_.op1("to_copy", {logits}, {{"dtype", "f32"}}, "logits.cast");
    b_.output("logits", logits);
    const ValueId flat = b_.op1("reshape", {logits}, {{"shape", Shape{picks, c_.vocab_size}}});
    const ValueId seen = b_.mutable_buffer("seen_tokens", DType::i32,
                                           {slots_, ops::sampling::seen_words(c_.vocab_size)});
    const std::vector<ValueId> next =
        b_.op("sample_rows_penalized", {flat, sampling, counters, seen, pick_slots}, {}, "next_tokens");
    b_.mutate(seen, next[1]);
    b_.output("next_tokens", b_.op1("reshape", {next[0]}, {{"shape", Shape{1, picks}}}));
    return finish(progress);
  }

  // The embedding lookup and every layer: the last block's output (still to be added to the
  // residual stream) and the residual stream.
  std::pair<ValueId, ValueId> layers(Progress& progress, ValueId table, ValueId tokens) {
    progress.update("embedding");
    // The rows in the activations' dtype, converted by the lookup itself.
    const ValueId x = b_.op1("embedding", {table, tokens}, {{"dtype", graph::dtype_name(act_)}}, "embed");
    // x is the residual stream; `pending` is the block output still to be added to it.
    ValueId residual = x;
    ValueId pending = graph::kNoValue;
    for (int64_t i = 0; i < c_.num_layers; ++i) {
      progress.update("layer " + std::to_string(i + 1) + "/" + std::to_string(c_.num_layers));
      const ValueId in_norm = norm_weight(layer_tensor(i, "input_layernorm.weight"));
      // Layer 0's input norm has no block output to add: it is add_rms_norm of the embedding
      // with itself, eps times 4, which is rms_norm(x) exactly (2x / sqrt(mean((2x)^2) + 4 eps):
      // scaling by 2 and 4 rounds nothing), so that it runs in the qkv product's prologue like
      // every other layer's (one dispatch a decode step fewer); x + x is not the residual.
      const Normed in = pending == graph::kNoValue ? Normed{graph::kNoValue, residual, residual, in_norm, true}
                                                   : Normed{graph::kNoValue, pending, residual, in_norm};
      const ValueId attn = attention(i, in, residual);
      const ValueId post_norm = norm_weight(layer_tensor(i, "post_attention_layernorm.weight"));
      pending = mlp(i, {graph::kNoValue, attn, residual, post_norm}, residual);
    }
    return {pending, residual};
  }

  BuiltModel finish(Progress& progress) {
    BuiltModel m;
    m.config = c_;
    m.graph = b_.build();
    m.weights = b_.weights();
    m.later = std::move(later_);
    progress.done();
    return m;
  }

  std::pair<ValueId, ValueId> add_norm(ValueId x, ValueId residual, ValueId weight, const std::string& name) {
    auto outs = b_.op("add_rms_norm", {x, residual, weight}, {{"eps", c_.rms_norm_eps}}, name);
    return {outs[0], outs[1]};
  }

  // `op` (linear_qkv, linear_swiglu) of `in` and the inputs after x: on h, or as
  // add_rms_norm_<op>, whose last output (x + residual) becomes `residual` (not where `doubled`).
  std::vector<ValueId> product(const std::string& op, const Normed& in, std::vector<ValueId> rest, graph::Attrs attrs,
                               const std::string& name, ValueId& residual) {
    if (in.h != graph::kNoValue) {
      rest.insert(rest.begin(), in.h);
      return b_.op(op, rest, attrs, name);
    }
    rest.insert(rest.begin(), {in.x, in.residual, in.weight});
    attrs.insert_or_assign("eps", in.doubled ? 4 * c_.rms_norm_eps : c_.rms_norm_eps);
    std::vector<ValueId> outs = b_.op("add_rms_norm_" + op, rest, attrs, name);
    if (!in.doubled) residual = outs.back();
    outs.pop_back();
    return outs;
  }

  std::map<std::string, ValueId> shared_;  // layer 0's matrices by name (share_layer_weights)
  std::vector<BuiltModel::LaterConstant> later_;  // LoadOptions::defer_weights
  // The reused model's constant `name` (build_rows_decoder).
  ValueId reused(const std::string& name) {
    const auto it = reused_.find(name);
    if (it == reused_.end()) throw ModelError("", name, "the model to batch has no constant of this name");
    const graph::TensorType& type = reuse_->graph.type(it->second->value);
    // A matrix still to be made (LoadOptions::defer_weights): the program built from this graph
    // reads it from the reused model's program, which is given its bytes.
    if (it->second->data.bytes > 0 && reuse_->weights.blob(it->second->data.blob).empty()) {
      return b_.later_constant(name, type);
    }
    return b_.constant(name, type, it->second->data);
  }

  ValueId norm_weight(const std::string& name, int64_t size = 0, const char* why = "hidden_size") {
    if (reuse_) return reused(name);
    if (size == 0) size = c_.hidden_size;
    const SourceTensor t = w_.tensor(name, {size}, why);
    Encoded e = encode_dense(t.values(), {size}, act_, {name, t.file});
    return b_.constant(name, e.type, std::move(e.bytes));
  }

  // The parts' rows stacked into one [sum of rows, cols] weight (q, k and v for linear_qkv), or,
  // with `interleave`, equal parts' rows taken in turn (row j of part p at j * parts + p: gate
  // and up for linear_swiglu).
  ValueId matrix(const std::string& name, const std::vector<Part>& parts, int64_t cols, const char* cols_why,
                 bool interleave = false) {
    if (reuse_) return reused(name);
    // LoadOptions::share_layer_weights: layer i's matrix is layer 0's of the same name.
    std::string share_key;
    if (o_.share_layer_weights && name.starts_with(kLayerPrefix)) {
      const size_t dot = name.find('.', kLayerPrefix.size());
      share_key = std::string(kLayerPrefix) + "0" + name.substr(dot);
      if (const auto it = shared_.find(share_key); it != shared_.end()) return it->second;
    }
    auto sources = std::make_shared<std::vector<SourceTensor>>();
    SourceTensor whole{0, cols, {}, ""};
    for (const Part& p : parts) {
      sources->push_back(w_.tensor(p.tensor, {p.rows, cols}, std::string(p.why) + " by " + cols_why));
      whole.rows += p.rows;
      whole.file = sources->back().file;
    }
    // Row r of the whole: stacked, the parts one after another; interleaved, row r / parts of
    // part r % parts. Blocks of rows are read a run of one part's rows at a time.
    whole.read = [held = sources, interleave, cols](int64_t first, int64_t count, float* out) {
      const std::vector<SourceTensor>& from = *held;
      const auto n_parts = static_cast<int64_t>(from.size());
      for (int64_t r = first; r < first + count;) {
        int64_t part = 0, row = r, run = 1;
        if (interleave) {
          part = r % n_parts;
          row = r / n_parts;
        } else {
          while (row >= from[static_cast<size_t>(part)].rows) row -= from[static_cast<size_t>(part++)].rows;
          run = std::min(first + count - r, from[static_cast<size_t>(part)].rows - row);
        }
        from[static_cast<size_t>(part)].read(row, run, out + (r - first) * cols);
        r += run;
      }
    };
    const std::string origin =
        parts.size() == 1 ? parts[0].tensor : name + (interleave ? " (rows interleaved)" : " (stacked)");
    const Origin from{origin, whole.file};
    ValueId v = graph::kNoValue;
    if (o_.defer_weights) {
      v = b_.later_constant(name, matrix_type(whole.rows, cols, o_, act_, from));
      later_.push_back({static_cast<uint32_t>(b_.constant_count() - 1),
                        [whole, o = o_, act = act_, from] { return encode_matrix(whole, o, act, from).bytes; }});
    } else {
      Encoded e = encode_matrix(whole, o_, act_, from);
      v = b_.constant(name, e.type, std::move(e.bytes));
    }
    if (!share_key.empty()) shared_[share_key] = v;
    return v;
  }

  ValueId embedding_table() {
    return matrix("model.embed_tokens.weight", {{"model.embed_tokens.weight", c_.vocab_size, "vocab_size"}},
                  c_.hidden_size, "hidden_size");
  }

  ValueId lm_head(ValueId table) {
    if (c_.tie_word_embeddings) return table;
    return matrix("lm_head.weight", {{"lm_head.weight", c_.vocab_size, "vocab_size"}}, c_.hidden_size, "hidden_size");
  }

  graph::Attrs rope_attrs() const {
    graph::Attrs a{{"theta", c_.rope_theta}, {"layout", "rotate_half"}};
    if (c_.rope_scaling) {
      a.insert_or_assign("scaling", "llama3");
      a.insert_or_assign("factor", c_.rope_scaling->factor);
      a.insert_or_assign("low_freq_factor", c_.rope_scaling->low_freq_factor);
      a.insert_or_assign("high_freq_factor", c_.rope_scaling->high_freq_factor);
      a.insert_or_assign("original_max_position", c_.rope_scaling->original_max_position);
    }
    return a;
  }

  ValueId attention(int64_t i, const Normed& x, ValueId& residual) {
    const int64_t d = c_.head_dim;
    const int64_t q_rows = c_.num_heads * d;
    const int64_t kv_rows = c_.num_kv_heads * d;
    const ValueId wqkv = matrix(layer_tensor(i, "self_attn.qkv_proj.weight"),
                                {{layer_tensor(i, "self_attn.q_proj.weight"), q_rows, "num_attention_heads * head_dim"},
                                 {layer_tensor(i, "self_attn.k_proj.weight"), kv_rows, "num_key_value_heads * head_dim"},
                                 {layer_tensor(i, "self_attn.v_proj.weight"), kv_rows, "num_key_value_heads * head_dim"}},
                                c_.hidden_size, "hidden_size");
    auto qkv = product("linear_qkv", x, {wqkv}, {{"splits", {q_rows, kv_rows, kv_rows}}}, label(i, "attn.qkv"), residual);
    const ValueId q = b_.op1("reshape", {qkv[0]}, {{"shape", Shape{1, seq_, c_.num_heads, d}}});
    const ValueId k = b_.op1("reshape", {qkv[1]}, {{"shape", Shape{1, seq_, c_.num_kv_heads, d}}});
    const ValueId v = b_.op1("reshape", {qkv[2]}, {{"shape", Shape{1, seq_, c_.num_kv_heads, d}}});
    const Shape cache_shape{slots_ > 0 ? slots_ : 1, c_.num_kv_heads, max_seq_, d};
    const ValueId kc = b_.mutable_buffer(label(i, "k_cache"), cache_, cache_shape);
    const ValueId vc = b_.mutable_buffer(label(i, "v_cache"), cache_, cache_shape);
    const ValueId wo = matrix(layer_tensor(i, "self_attn.o_proj.weight"),
                              {{layer_tensor(i, "self_attn.o_proj.weight"), c_.hidden_size, "hidden_size"}}, q_rows,
                              "num_attention_heads * head_dim");
    if (slots_ > 0) return attention_rows(i, q, k, v, kc, vc, wo);
    // Qwen3's q/k norms, rope on q and k, both cache updates, the attention and the output
    // projection: one node (at a decode step two dispatches, pass 1 of the split attention and
    // the projection merging its chunks, instead of rope_update_cache, sdpa_with_kv_cache's two
    // and the projection's).
    std::vector<ValueId> in{q, k, v, kc, vc, pos_, wo};
    graph::Attrs attrs = rope_attrs();
    if (c_.architecture == Architecture::Qwen3) {
      in.push_back(norm_weight(layer_tensor(i, "self_attn.q_norm.weight"), d, "head_dim"));
      in.push_back(norm_weight(layer_tensor(i, "self_attn.k_norm.weight"), d, "head_dim"));
      attrs.insert_or_assign("eps", c_.rms_norm_eps);
    }
    attrs.insert_or_assign("scale", 1.0 / std::sqrt(static_cast<double>(d)));  // Hugging Face: head_dim ** -0.5
    const std::vector<ValueId> outs = b_.op("rope_sdpa_linear", in, attrs, label(i, "attn.sdpa_o_proj"));
    b_.mutate(kc, outs[1]);
    b_.mutate(vc, outs[2]);
    return outs[3];
  }

  // The rows graph's attention: rope and the cache writes at each row's (slot, position), then
  // the attention of each row over its slot and the output projection on one node.
  ValueId attention_rows(int64_t i, ValueId q, ValueId k, ValueId v, ValueId kc, ValueId vc, ValueId wo) {
    const int64_t d = c_.head_dim;
    std::vector<ValueId> in{q, k, v, kc, vc, rows_};
    graph::Attrs attrs = rope_attrs();
    if (c_.architecture == Architecture::Qwen3) {
      in.push_back(norm_weight(layer_tensor(i, "self_attn.q_norm.weight"), d, "head_dim"));
      in.push_back(norm_weight(layer_tensor(i, "self_attn.k_norm.weight"), d, "head_dim"));
      attrs.insert_or_assign("eps", c_.rms_norm_eps);
    }
    const std::vector<ValueId> roped = b_.op("rope_update_cache_rows", in, attrs, label(i, "attn.rope_cache"));
    b_.mutate(kc, roped[1]);
    b_.mutate(vc, roped[2]);
    const std::vector<ValueId> outs = b_.op("sdpa_rows_linear", {roped[0], roped[1], roped[2], rows_, wo},
                                            {{"scale", 1.0 / std::sqrt(static_cast<double>(d))}}, label(i, "attn.sdpa_o_proj"));
    return outs[1];
  }

  ValueId mlp(int64_t i, const Normed& in, ValueId& residual) {
    const int64_t n = c_.intermediate_size;
    auto weight = [&](const char* suffix, int64_t rows, const char* rows_why, int64_t cols, const char* cols_why) {
      const std::string name = layer_tensor(i, suffix);
      return matrix(name, {{name, rows, rows_why}}, cols, cols_why);
    };
    auto down = [&] { return weight("mlp.down_proj.weight", c_.hidden_size, "hidden_size", n, "intermediate_size"); };
    if (o_.weights == WeightFormat::Q4) {
      // One product for gate and up with silu(gate) * up in its epilogue, and the down product,
      // on one node (linear_swiglu_linear: a one-token step hands act over in int8). Its act
      // output is left unused.
      const std::string gate = layer_tensor(i, "mlp.gate_proj.weight"), up = layer_tensor(i, "mlp.up_proj.weight");
      const ValueId wgu = matrix(layer_tensor(i, "mlp.gate_up_proj.weight"),
                                 {{gate, n, "intermediate_size"}, {up, n, "intermediate_size"}}, c_.hidden_size,
                                 "hidden_size", true);
      return product("linear_swiglu_linear", in, {wgu, down()}, {}, label(i, "mlp"), residual)[1];
    }
    ValueId h;
    std::tie(h, residual) = add_norm(in.x, in.residual, in.weight, label(i, "post_attention_norm"));
    const ValueId wg = weight("mlp.gate_proj.weight", n, "intermediate_size", c_.hidden_size, "hidden_size");
    const ValueId wu = weight("mlp.up_proj.weight", n, "intermediate_size", c_.hidden_size, "hidden_size");
    const ValueId gate = b_.op1("linear", {h, wg}, {}, label(i, "mlp.gate_proj"));
    const ValueId up = b_.op1("linear", {h, wu}, {}, label(i, "mlp.up_proj"));
    const ValueId act = b_.op1("swiglu", {gate, up}, {}, label(i, "mlp.swiglu"));
    return b_.op1("linear", {act, down()}, {}, label(i, "mlp.down_proj"));
  }

  const ModelConfig& c_;
  const WeightSource& w_;
  LoadOptions o_;
  const BuiltModel* reuse_ = nullptr;  // build_rows_decoder's model
  std::map<std::string, const graph::Constant*> reused_;
  int64_t slots_ = 0;
  graph::GraphBuilder b_;
  DType act_ = DType::f32;
  DType cache_ = DType::f32;
  int64_t max_seq_ = 0;
  int64_t max_prefill_ = 0;
  graph::SymId seq_;
  ValueId pos_ = graph::kNoValue;
  ValueId rows_ = graph::kNoValue;  // the rows graph's (slot, position) per row
};

}  // namespace

WeightSource checkpoint_weights(std::shared_ptr<const Checkpoint> checkpoint) {
  WeightSource source;
  source.origin = checkpoint->dir().string();
  source.tensor = [checkpoint](const std::string& name, const std::vector<int64_t>& shape, const std::string& why) {
    const TensorView& t = checkpoint->at(name);
    expect_shape(t, shape, why);
    const int64_t rows = shape.size() < 2 ? 1 : shape[0];
    const auto cols = static_cast<int64_t>(t.numel()) / std::max<int64_t>(rows, 1);
    // The reader keeps the checkpoint (and so its mapping of the file) open.
    auto read = [checkpoint, &t, cols](int64_t first, int64_t count, float* out) {
      to_f32(t, static_cast<uint64_t>(first * cols), static_cast<uint64_t>(count * cols), out);
    };
    return SourceTensor{rows, cols, read, t.file};
  };
  return source;
}

WeightSource checkpoint_weights(const Checkpoint& checkpoint) {
  return checkpoint_weights(std::shared_ptr<const Checkpoint>(std::shared_ptr<void>(), &checkpoint));
}

BuiltModel build_decoder(const ModelConfig& config, const WeightSource& weights, const LoadOptions& options) {
  return Decoder(config, weights, options).build();
}

BuiltModel build_rows_decoder(const BuiltModel& model, int64_t slots) {
  if (slots < 1) throw ModelError("", "slots", "a rows graph needs at least one slot");
  const WeightSource none{"", {}};
  return Decoder(model.config, none, LoadOptions{}, &model, slots).build();
}

BuiltModel build_decoder(const ModelConfig& config, const Checkpoint& checkpoint, const LoadOptions& options) {
  return build_decoder(config, checkpoint_weights(checkpoint), options);
}

BuiltModel load_hf(const std::filesystem::path& dir, const LoadOptions& options) {
  const ModelConfig config = load_config(dir);
  return build_decoder(config, checkpoint_weights(std::make_shared<const Checkpoint>(dir)), options);
}

}  // namespace wgx::models
