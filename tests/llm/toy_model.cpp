#include "toy_model.h"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "llm/sampler.h"
#include "ops/sampling/sample_params.h"

namespace wgx::llm::test {

namespace {

using graph::DType;
using graph::Shape;

constexpr int64_t kDim = 32, kHeads = 2, kKvHeads = 1, kHeadDim = 16;

std::vector<uint8_t> random_weights(int64_t rows, int64_t cols, uint64_t seed, double scale) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (float& x : v) x = static_cast<float>((rng.uniform() * 2 - 1) * scale);
  std::vector<uint8_t> bytes(v.size() * 4);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

// GPT-2's byte-to-character map for the bytes the toy vocabulary has.
std::string byte_level(int byte) {
  if (byte == ' ') return "\xC4\xA0";   // U+0120
  if (byte == '\n') return "\xC4\x8A";  // U+010A
  if (byte == 0xC3) return "\xC3\x83";  // U+00C3: printable Latin-1 maps to itself
  if (byte == 0xA9) return "\xC2\xA9";  // U+00A9
  return std::string(1, static_cast<char>(byte));
}

}  // namespace

ToyModel toy_model(bool all_logits, bool next_token, bool device_sampling, bool device_penalty) {
  graph::GraphBuilder b;
  const graph::SymId seq = b.sym("seq_len", 1, toy::kMaxPrefill);
  const graph::ValueId pos = b.sym_value(b.sym("input_pos", 0, toy::kMaxSeq - 1));
  const graph::ValueId tokens = b.input("tokens", DType::i32, {1, seq});
  const double s = 1.0 / std::sqrt(static_cast<double>(kDim));
  auto weight = [&](const char* name, int64_t rows, int64_t cols, uint64_t seed, double scale) {
    return b.constant(name, DType::f32, {rows, cols}, random_weights(rows, cols, seed, scale));
  };
  const graph::ValueId embed = weight("embed", toy::kVocab, kDim, 1, 1.0);
  const graph::ValueId wq = weight("wq", kHeads * kHeadDim, kDim, 2, 3 * s);
  const graph::ValueId wk = weight("wk", kKvHeads * kHeadDim, kDim, 3, 3 * s);
  const graph::ValueId wv = weight("wv", kKvHeads * kHeadDim, kDim, 4, 2 * s);
  const graph::ValueId wo = weight("wo", kDim, kHeads * kHeadDim, 5, 2 * s);
  const graph::ValueId lm_head = weight("lm_head", toy::kVocab, kDim, 6, 3 * s);
  const graph::ValueId k_cache =
      b.mutable_buffer("layers.0.k_cache", DType::f32, {1, kKvHeads, toy::kMaxSeq, kHeadDim});
  const graph::ValueId v_cache =
      b.mutable_buffer("layers.0.v_cache", DType::f32, {1, kKvHeads, toy::kMaxSeq, kHeadDim});

  const graph::ValueId x = b.op1("embedding", {embed, tokens});
  auto heads = [&](graph::ValueId w, int64_t n) {
    return b.op1("reshape", {b.op1("linear", {x, w})}, {{"shape", Shape{1, seq, n, kHeadDim}}});
  };
  const graph::ValueId q = b.op1("rope", {heads(wq, kHeads), pos});
  const graph::ValueId k = b.op1("rope", {heads(wk, kKvHeads), pos});
  const graph::ValueId k_all = b.op1("update_cache", {k_cache, k, pos});
  const graph::ValueId v_all = b.op1("update_cache", {v_cache, heads(wv, kKvHeads), pos});
  b.mutate(k_cache, k_all);
  b.mutate(v_cache, v_all);
  const graph::ValueId attn = b.op1("sdpa_with_kv_cache", {q, k_all, v_all, pos});
  const graph::ValueId merged = b.op1("reshape", {attn}, {{"shape", Shape{1, seq, kHeads * kHeadDim}}});
  const graph::ValueId h = b.op1("add", {x, b.op1("linear", {merged, wo})});
  const graph::ValueId last = all_logits ? h : b.op1("select", {h}, {{"dim", 1}, {"index", -1}});
  const graph::ValueId logits = b.op1("linear", {last, lm_head});
  b.output("logits", logits);
  if (next_token) {
    const graph::ValueId row = all_logits ? b.op1("select", {logits}, {{"dim", 1}, {"index", -1}}) : logits;
    if (device_sampling && device_penalty) {
      const graph::ValueId words = b.input("sampling", DType::i32, {8});
      const graph::ValueId seen =
          b.mutable_buffer("seen_tokens", DType::i32, {ops::sampling::seen_words(toy::kVocab)});
      const std::vector<graph::ValueId> pick = b.op("sample_token_penalized", {row, words, pos, seen});
      b.mutate(seen, pick[1]);
      b.output("next_token", pick[0]);
    } else if (device_sampling) {
      b.output("next_token", b.op1("sample_token", {row, b.input("sampling", DType::i32, {8}), pos}));
    } else {
      b.output("next_token", b.op1("argmax", {row}, {{"dim", -1}, {"keepdim", true}}));
    }
  }
  return {b.build(), b.weights()};
}

std::string toy_tokenizer_json() {
  nlohmann::json vocab = nlohmann::json::object();
  for (int c = '!'; c <= '~'; ++c) vocab[byte_level(c)] = c - '!';
  vocab[byte_level(' ')] = 94;
  vocab[byte_level('\n')] = 95;
  vocab[byte_level(0xC3)] = toy::e_acute_lead;
  vocab[byte_level(0xA9)] = toy::e_acute_trail;
  nlohmann::json added = nlohmann::json::array();
  auto add = [&](int32_t id, const char* content, bool special) {
    added.push_back({{"id", id},
                     {"content", content},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", special}});
  };
  add(toy::im_start, "<|im_start|>", true);
  add(toy::im_end, "<|im_end|>", true);
  add(toy::endoftext, "<|endoftext|>", true);
  add(toy::think, "<think>", false);
  add(toy::end_think, "</think>", false);
  const nlohmann::json byte_level_step = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", true}};
  const nlohmann::json json = {{"version", "1.0"},
                               {"added_tokens", added},
                               {"normalizer", nullptr},
                               {"pre_tokenizer", byte_level_step},
                               {"post_processor", nullptr},
                               {"decoder", byte_level_step},
                               {"model",
                                {{"type", "BPE"},
                                 {"dropout", nullptr},
                                 {"unk_token", nullptr},
                                 {"continuing_subword_prefix", ""},
                                 {"end_of_word_suffix", ""},
                                 {"fuse_unk", false},
                                 {"byte_fallback", false},
                                 {"ignore_merges", false},
                                 {"vocab", vocab},
                                 {"merges", nlohmann::json::array()}}}};
  return json.dump();
}

tokenizer::Tokenizer toy_tokenizer() {
  return tokenizer::Tokenizer::from_json(toy_tokenizer_json(), kToyTokenizerConfig, "toy tokenizer");
}

}  // namespace wgx::llm::test
