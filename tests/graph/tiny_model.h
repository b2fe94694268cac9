// A one-layer attention block at small prime-ish sizes, built through GraphBuilder: embedding,
// rms_norm, a q4gsw and an f32 projection, heads via reshape/transpose/permute, softmax attention,
// a tied output projection, argmax, an f16 bias through to_copy, and two mutable buffers (one
// zero-initialised, one from a constant) with mutations. Shared by the graph and format tests.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/builder.h"

namespace wgx::graph::testing {

// Deterministic filler bytes.
inline std::vector<uint8_t> pattern(uint64_t size, uint32_t seed) {
  std::vector<uint8_t> out(size);
  for (uint64_t i = 0; i < size; ++i)
    out[i] = static_cast<uint8_t>((i * 31 + seed * 7 + (i >> 7)) & 0xff);
  return out;
}

struct TinyModel {
  static constexpr int64_t kVocab = 37;
  static constexpr int64_t kDim = 64;
  static constexpr int64_t kHeads = 2;
  static constexpr int64_t kHeadDim = 32;
  static constexpr int64_t kMaxSeq = 48;

  GraphBuilder b;
  SymId seq, pos;
  ValueId tokens, embed, k_cache, counter, logits, next, k_new, counter_new, mask;

  TinyModel() {
    seq = b.sym("seq_len", 1, 16);
    pos = b.sym("input_pos", 0, kMaxSeq - 1);
    tokens = b.input("tokens", DType::i32, {1, seq});
    embed = b.constant("embed", DType::f32, {kVocab, kDim}, pattern(kVocab * kDim * 4, 1));
    const ValueId norm_w = b.constant("norm.weight", DType::f32, {kDim}, pattern(kDim * 4, 2));
    const TensorType q4_type{DType::q4gsw, {kDim, kDim}, {32, DType::f32}};
    const ValueId wq = b.constant("wq", q4_type, pattern(*tensor_bytes(q4_type, {}), 3));
    const ValueId wk = b.constant("wk", DType::f32, {kDim, kDim}, pattern(kDim * kDim * 4, 4));
    const ValueId bias16 = b.constant("bias16", DType::f16, {kVocab}, pattern(kVocab * 2, 5));
    k_cache = b.mutable_buffer("k_cache", DType::f32, {1, kHeads, kMaxSeq, kHeadDim});
    const ValueId counter_init = b.constant("counter.init", DType::i32, {1}, {5, 0, 0, 0});
    counter = b.mutable_buffer("counter", counter_init);

    const ValueId x = b.op1("embedding", {embed, tokens}, {}, "embed");
    const ValueId h = b.op1("rms_norm", {x, norm_w}, {{"eps", 1e-5}}, "norm");
    const ValueId q = b.op1("linear", {h, wq}, {}, "attn.q");
    const ValueId k = b.op1("linear", {h, wk}, {}, "attn.k");
    const ValueId qh = b.op1("reshape", {q}, {{"shape", Shape{1, seq, kHeads, kHeadDim}}});
    const ValueId qt = b.op1("transpose", {qh}, {{"dim0", 1}, {"dim1", 2}});
    const ValueId kh = b.op1("reshape", {k}, {{"shape", Shape{1, seq, kHeads, -1}}});
    const ValueId kt = b.op1("permute", {kh}, {{"dims", {0, 2, 3, 1}}});
    const ValueId scores = b.op1("matmul", {qt, kt}, {}, "attn.scores");
    const ValueId scaled = b.op1("mul", {scores, b.scalar(0.17677669529663687)});
    const ValueId probs = b.op1("softmax", {scaled}, {{"dim", -1}});
    const ValueId vt = b.op1("transpose", {kh}, {{"dim0", 1}, {"dim1", 2}});
    const ValueId ctx = b.op1("matmul", {probs, vt});
    const ValueId merged = b.op1("reshape", {b.op1("transpose", {ctx}, {{"dim0", 1}, {"dim1", 2}})},
                                 {{"shape", Shape{1, seq, -1}}});
    const ValueId out = b.op1("add", {x, merged}, {}, "residual");
    const ValueId raw_logits = b.op1("linear", {out, embed}, {}, "lm_head");
    const ValueId bias = b.op1("to_copy", {bias16}, {{"dtype", "f32"}});
    logits = b.op1("add", {raw_logits, bias});
    next = b.op1("argmax", {logits}, {{"dim", -1}});
    k_new = b.op1("mul", {k_cache, b.scalar(0.5)}, {}, "cache.update");
    counter_new = b.op1("add", {counter, b.scalar_int(1)});
    mask = b.op1("lt", {tokens, b.sym_value(pos)});
    b.output("logits", logits);
    b.output("next", next);
    b.output("counter", counter_new);
    b.output("mask", mask);
    b.mutate(k_cache, k_new);
    b.mutate(counter, counter_new);
  }
};

}  // namespace wgx::graph::testing
