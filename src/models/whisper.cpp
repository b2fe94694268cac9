#include "models/whisper.h"

#include <cmath>
#include <string>
#include <utility>

#include "graph/builder.h"
#include "models/encode.h"
#include "models/error.h"
#include "models/progress.h"
#include "models/safetensors.h"

namespace wgx::models {

namespace {

using graph::DType;
using graph::ValueId;

constexpr double kLayerNormEps = 1e-5;  // WhisperConfig has no field for it: nn.LayerNorm's default
constexpr int64_t kFrames = 3000;       // 30 s of features at a hop of 160 samples

// One of the two graphs: its builder, weight source and naming.
class Part {
 public:
  Part(const WeightSource& w, const WhisperLoadOptions& o, std::string prefix)
      : w_(w), o_(o), prefix_(std::move(prefix)), q4_(o.weights == WeightFormat::Q4) {}

  graph::GraphBuilder& b() { return b_; }

  // A weight by its Hugging Face name under the part's prefix ("model.encoder."), f32; through
  // weight_at, by its whole name, q4gsw where `q4` (a product's matrix with WeightFormat::Q4).
  ValueId weight(const std::string& name, std::vector<int64_t> shape, const std::string& why) {
    return weight_at(prefix_ + name, std::move(shape), why, false);
  }
  ValueId weight_at(const std::string& full, std::vector<int64_t> shape, const std::string& why, bool q4) {
    const SourceTensor t = w_.tensor(full, shape, why);
    Encoded e;
    if (shape.size() == 2 && q4) {
      LoadOptions lo;
      lo.weights = WeightFormat::Q4;
      lo.q4_group_size = o_.q4_group_size;
      e = encode_matrix(t, lo, DType::f32, {full, t.file});
    } else {
      e = encode_dense(t.values(), shape, DType::f32, {full, t.file});
    }
    return b_.constant(full, e.type, std::move(e.bytes));
  }

  ValueId layer_norm(const std::string& name, ValueId x, int64_t d) {
    return b_.op1("layer_norm", {x, weight(name + ".weight", {d}, "d_model"), weight(name + ".bias", {d}, "d_model")},
                  {{"eps", kLayerNormEps}}, name);
  }

  // linear(x, <name>.weight [out, in], <name>.bias) (no bias where `bias` is false: k_proj);
  // the name under the part's prefix, or whole with `full`.
  ValueId linear(const std::string& name, ValueId x, int64_t out, int64_t in, bool bias = true, bool full = false) {
    const std::string why = "[" + std::to_string(out) + ", " + std::to_string(in) + "]";
    const std::string n = full ? name : prefix_ + name;
    std::vector<ValueId> inputs{x, weight_at(n + ".weight", {out, in}, why, q4_)};
    if (bias) inputs.push_back(weight_at(n + ".bias", {out}, why, false));
    return b_.op1("linear", inputs, {}, name);
  }

  // [1, S, heads * D] -> [1, heads, S, D]
  ValueId split_heads(ValueId x, graph::Dim s, int64_t heads, int64_t d, const std::string& name) {
    const ValueId r = b_.op1("reshape", {x}, {{"shape", graph::Shape{1, s, heads, d}}}, name + ".heads");
    return b_.op1("contiguous", {b_.op1("permute", {r}, {{"dims", std::vector<int64_t>{0, 2, 1, 3}}})}, {},
                  name + ".heads");
  }

  // softmax(q k^T / sqrt(D)) v over heads, non-causal: q [1, S, H * D], k and v [1, H, T, D] ->
  // [1, S, H * D].
  ValueId attend(ValueId q, ValueId k, ValueId v, graph::Dim s, int64_t heads, int64_t d, const std::string& name) {
    const ValueId q4 = b_.op1("reshape", {q}, {{"shape", graph::Shape{1, s, heads, d}}}, name + ".q");
    const ValueId o = b_.op1("attention", {q4, k, v}, {{"scale", 1.0 / std::sqrt(static_cast<double>(d))}}, name);
    return b_.op1("reshape", {o}, {{"shape", graph::Shape{1, s, heads * d}}}, name + ".merge");
  }

  ValueId mlp(const std::string& layer, ValueId x, int64_t d, int64_t ffn) {
    const ValueId h = layer_norm(layer + "final_layer_norm", x, d);
    const ValueId a = b_.op1("gelu", {linear(layer + "fc1", h, ffn, d)}, {}, layer + "gelu");
    return b_.op1("add", {x, linear(layer + "fc2", a, d, ffn)}, {}, layer + "mlp.residual");
  }

 private:
  const WeightSource& w_;
  const WhisperLoadOptions& o_;
  std::string prefix_;
  bool q4_ = false;
  graph::GraphBuilder b_;
};

std::string layer_name(int64_t i) { return "layers." + std::to_string(i) + "."; }

void build_encoder(const WhisperConfig& c, const WeightSource& w, const WhisperLoadOptions& o, Progress& progress,
                   BuiltWhisper& out) {
  Part p(w, o, "model.encoder.");
  graph::GraphBuilder& b = p.b();
  const int64_t d = c.d_model, mels = c.num_mel_bins, positions = c.max_source_positions;
  const int64_t heads = c.encoder_heads, hd = d / heads;
  const ValueId features = b.input("features", DType::f32, {1, mels, kFrames});
  progress.update("encoder stem");
  ValueId x = b.op1("conv1d", {features, p.weight("conv1.weight", {d, mels, 3}, "[d_model, num_mel_bins, 3]"),
                               p.weight("conv1.bias", {d}, "d_model")},
                    {{"padding", 1}}, "conv1");
  x = b.op1("gelu", {x}, {}, "conv1.gelu");
  x = b.op1("conv1d", {x, p.weight("conv2.weight", {d, d, 3}, "[d_model, d_model, 3]"), p.weight("conv2.bias", {d}, "d_model")},
            {{"padding", 1}, {"stride", 2}}, "conv2");
  x = b.op1("gelu", {x}, {}, "conv2.gelu");
  x = b.op1("contiguous", {b.op1("transpose", {x}, {{"dim0", 1}, {"dim1", 2}})}, {}, "stem.transpose");
  x = b.op1("add", {x, p.weight("embed_positions.weight", {positions, d}, "[max_source_positions, d_model]")}, {},
            "embed_positions");
  for (int64_t i = 0; i < c.encoder_layers; ++i) {
    progress.update("encoder layer " + std::to_string(i + 1) + "/" + std::to_string(c.encoder_layers));
    const std::string l = layer_name(i);
    const ValueId h = p.layer_norm(l + "self_attn_layer_norm", x, d);
    const ValueId q = p.linear(l + "self_attn.q_proj", h, d, d);
    const ValueId k = p.linear(l + "self_attn.k_proj", h, d, d, false);
    const ValueId v = p.linear(l + "self_attn.v_proj", h, d, d);
    const std::string a = l + "self_attn";
    const ValueId attn = p.attend(q, p.split_heads(k, positions, heads, hd, a + ".k"),
                                  p.split_heads(v, positions, heads, hd, a + ".v"), positions, heads, hd, a);
    x = b.op1("add", {x, p.linear(l + "self_attn.out_proj", attn, d, d)}, {}, l + "self_attn.residual");
    x = p.mlp(l, x, d, c.encoder_ffn);
  }
  const ValueId enc = p.layer_norm("layer_norm", x, d);
  b.output("encoder", enc);

  // The decoder layers' cross-attention keys and values: once per window, here.
  const int64_t dheads = c.decoder_heads, dhd = d / dheads;
  for (int64_t i = 0; i < c.decoder_layers; ++i) {
    const std::string l = layer_name(i);
    // The decoder layers' weights, in the encoder's graph.
    auto cross = [&](const char* proj, bool bias) {
      const std::string name = "model.decoder." + l + "encoder_attn." + proj;
      return p.split_heads(p.linear(name, enc, d, d, bias, true), positions, dheads, dhd, name);
    };
    b.output(whisper_cross_k(i), cross("k_proj", false));
    b.output(whisper_cross_v(i), cross("v_proj", true));
  }
  out.encoder = b.build();
  out.encoder_weights = b.weights();
}

void build_decoder_graph(const WhisperConfig& c, const WeightSource& w, const WhisperLoadOptions& o, Progress& progress,
                         BuiltWhisper& out) {
  Part p(w, o, "model.decoder.");
  graph::GraphBuilder& b = p.b();
  const int64_t d = c.d_model, heads = c.decoder_heads, hd = d / heads, max_t = c.max_target_positions;
  const graph::SymId seq = b.sym("seq", 1, max_t);
  const ValueId pos = b.sym_value(b.sym("input_pos", 0, max_t - 1));
  const ValueId tokens = b.input("tokens", DType::i32, {1, seq});
  const ValueId positions = b.input("positions", DType::i32, {1, seq});
  const ValueId table = p.weight("embed_tokens.weight", {c.vocab_size, d}, "[vocab_size, d_model]");
  ValueId x = b.op1("embedding", {table, tokens}, {}, "embed_tokens");
  if (c.scale_embedding) x = b.op1("mul", {x, b.scalar(std::sqrt(static_cast<double>(d)))}, {}, "embed_scale");
  const ValueId pos_table = p.weight("embed_positions.weight", {max_t, d}, "[max_target_positions, d_model]");
  x = b.op1("add", {x, b.op1("embedding", {pos_table, positions}, {}, "embed_positions")}, {}, "embed");
  const DType cache = o.half_kv_cache ? DType::f16 : DType::f32;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  const int64_t frames = c.max_source_positions;
  for (int64_t i = 0; i < c.decoder_layers; ++i) {
    progress.update("decoder layer " + std::to_string(i + 1) + "/" + std::to_string(c.decoder_layers));
    const std::string l = layer_name(i);
    // Causal self-attention over the cache.
    {
      const std::string a = l + "self_attn";
      const ValueId h = p.layer_norm(l + "self_attn_layer_norm", x, d);
      auto heads4 = [&](ValueId v, const std::string& name) {
        return b.op1("reshape", {v}, {{"shape", graph::Shape{1, seq, heads, hd}}}, name);
      };
      const ValueId q = heads4(p.linear(a + ".q_proj", h, d, d), a + ".q");
      const ValueId k = heads4(p.linear(a + ".k_proj", h, d, d, false), a + ".k");
      const ValueId v = heads4(p.linear(a + ".v_proj", h, d, d), a + ".v");
      const ValueId kc = b.mutable_buffer(whisper_self_k(i), cache, {1, heads, max_t, hd});
      const ValueId vc = b.mutable_buffer(whisper_self_v(i), cache, {1, heads, max_t, hd});
      const ValueId kn = b.op1("update_cache", {kc, k, pos}, {}, l + "k_cache.update");
      const ValueId vn = b.op1("update_cache", {vc, v, pos}, {}, l + "v_cache.update");
      b.mutate(kc, kn);
      b.mutate(vc, vn);
      const ValueId attn = b.op1("sdpa_with_kv_cache", {q, kn, vn, pos}, {{"scale", scale}}, a + ".sdpa");
      const ValueId merged = b.op1("reshape", {attn}, {{"shape", graph::Shape{1, seq, d}}}, a + ".merge");
      x = b.op1("add", {x, p.linear(a + ".out_proj", merged, d, d)}, {}, a + ".residual");
    }
    // Cross-attention over the window's encoder keys and values.
    {
      const std::string a = l + "encoder_attn";
      const ValueId h = p.layer_norm(l + "encoder_attn_layer_norm", x, d);
      const ValueId q = p.linear(a + ".q_proj", h, d, d);
      const ValueId ck = b.mutable_buffer(whisper_cross_k(i), DType::f32, {1, heads, frames, hd});
      const ValueId cv = b.mutable_buffer(whisper_cross_v(i), DType::f32, {1, heads, frames, hd});
      const ValueId attn = p.attend(q, ck, cv, seq, heads, hd, a);
      x = b.op1("add", {x, p.linear(a + ".out_proj", attn, d, d)}, {}, a + ".residual");
    }
    x = p.mlp(l, x, d, c.decoder_ffn);
  }
  progress.update("logits");
  ValueId h = p.layer_norm("layer_norm", x, d);
  if (!o.all_logits) h = b.op1("select", {h}, {{"dim", 1}, {"index", -1}}, "last_token");
  b.output("logits", b.op1("linear", {h, table}, {}, "proj_out"));
  out.decoder = b.build();
  out.decoder_weights = b.weights();
}

}  // namespace

std::string whisper_cross_k(int64_t layer) { return "layers." + std::to_string(layer) + ".cross_k"; }
std::string whisper_cross_v(int64_t layer) { return "layers." + std::to_string(layer) + ".cross_v"; }
std::string whisper_self_k(int64_t layer) { return "layers." + std::to_string(layer) + ".k_cache"; }
std::string whisper_self_v(int64_t layer) { return "layers." + std::to_string(layer) + ".v_cache"; }

BuiltWhisper build_whisper(const WhisperConfig& config, const WeightSource& weights, const WhisperLoadOptions& options) {
  if (options.weights == WeightFormat::F16) {
    throw ModelError("", "WhisperLoadOptions", "f16 weights are not supported for Whisper yet (f32 or q4)");
  }
  Progress progress(options.progress, "converting");
  BuiltWhisper out;
  out.config = config;
  build_encoder(config, weights, options, progress, out);
  build_decoder_graph(config, weights, options, progress, out);
  progress.done();
  return out;
}

BuiltWhisper load_whisper(const std::filesystem::path& dir, const WhisperLoadOptions& options) {
  const WhisperConfig config = load_whisper_config(dir);
  const Checkpoint checkpoint(dir);
  return build_whisper(config, checkpoint_weights(checkpoint), options);
}

}  // namespace wgx::models
