// Writes the .wgx target's seed corpus (corpus/wgx/): small files from the project's own writer
// that cover the format's parts and most ops, each as a whole file and as its graph section alone
// (which the target wraps in a file of its own; fuzz_wgx.cpp); and its dictionary: every op and
// attribute name the registry knows, bare and as the format spells a string (a u32 length
// first). Rerun it when the format or the ops change:
//
//   build/release/bin/fuzz_make_wgx_corpus fuzz/corpus/wgx fuzz/dict/wgx.dict
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <fstream>
#include <string>
#include <vector>

#include "format/layout.h"
#include "format/wgx_file.h"
#include "graph/builder.h"
#include "graph/op_schema.h"
#include "models/config.h"
#include "models/synthetic.h"
#include "tiny_model.h"

namespace {

using namespace wgx;
using namespace wgx::graph;

void write_file(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// `name`.wgx, and `name`.graph: the graph section, from after the header to graph_size.
void write_seed(const std::filesystem::path& dir, const std::string& name, const Graph& g, const WeightStore& w,
                const format::Metadata& metadata) {
  const std::vector<uint8_t> file = format::write_wgx_bytes(g, w, metadata);
  write_file(dir / (name + ".wgx"), file);
  uint64_t graph_size = 0;
  for (int i = 0; i < 8; ++i) graph_size |= uint64_t{file[format::header::kGraphSizeAt + i]} << (8 * i);
  write_file(dir / (name + ".graph"), std::span(file).subspan(format::kHeaderSize, graph_size));
}

// tests/cli/make_sample_wgx.cpp's model: a symbolic input, a weight, a view, a buffer updated
// every step.
void sample(const std::filesystem::path& dir) {
  GraphBuilder b;
  SymId seq = b.sym("seq_len", 1, 64);
  ValueId x = b.input("x", DType::f32, {seq, 8});
  std::vector<uint8_t> bytes(32);
  for (int i = 0; i < 8; ++i) {
    const float v = 0.25f * static_cast<float>(i);
    std::memcpy(bytes.data() + 4 * i, &v, 4);
  }
  ValueId bias = b.constant("bias", DType::f32, {8}, bytes);
  ValueId y = b.op1("add", {x, bias}, {}, "add_bias");
  ValueId r = b.op1("reshape", {y}, {{"shape", Shape{seq, 2, 4}}}, "split_heads");
  ValueId count = b.mutable_buffer("count", DType::f32, {8});
  b.mutate(count, b.op1("add", {count, bias}, {}, "count_up"));
  b.output("y", r);
  write_seed(dir, "sample", b.build(), b.weights(), {{"model", "sample"}});
}

// The graph tests' attention block: q4gsw and f16 constants, scalars, a sym value, views and
// buffers initialised both ways.
void tiny_block(const std::filesystem::path& dir) {
  testing::TinyModel m;
  write_seed(dir, "tiny_block", m.b.build(), m.b.weights(), {{"arch", "tiny"}, {"empty", ""}});
}

// The decoder at a tiny geometry, as `wgx convert` writes one: the fused transformer ops, the
// KV caches and the sampling ops, with q4 and with f16 weights.
void decoder(const std::filesystem::path& dir, models::Architecture arch, models::WeightFormat weights,
             const std::string& name) {
  models::ModelConfig c;
  c.architecture = arch;
  c.vocab_size = 64;
  c.hidden_size = 32;
  c.intermediate_size = 64;
  c.num_layers = 1;
  c.num_heads = 2;
  c.num_kv_heads = 1;
  c.head_dim = 16;
  c.max_position_embeddings = 16;
  c.tie_word_embeddings = true;
  models::LoadOptions o;
  o.weights = weights;
  o.max_seq = 16;
  o.max_prefill = 8;
  const models::BuiltModel m = models::build_decoder(c, models::synthetic_weights(1), o);
  write_seed(dir, name, m.graph, m.weights, {{"arch", models::architecture_name(arch)}});
}

// A libFuzzer dictionary entry: printable ASCII as it is, everything else as \xNN.
std::string dict_entry(std::string_view bytes) {
  std::string out = "\"";
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += ch;
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
    }
  }
  return out + "\"";
}

void dictionary(const std::filesystem::path& path) {
  std::set<std::string> words;
  const OpRegistry& registry = OpRegistry::global();
  for (const std::string& op : registry.names()) {
    words.insert(op);
    for (const AttrSpec& a : registry.find(op)->attrs) words.insert(a.name);
  }
  std::ofstream out(path, std::ios::trunc);
  out << "# The .wgx target's dictionary, written by fuzz/make_wgx_corpus.cpp: op and attribute names,\n"
         "# bare and with the u32 length the format puts before a string.\n";
  out << "magic=" << dict_entry(std::string_view("WGX\0", 4)) << "\n";
  for (const std::string& w : words) {
    std::string prefixed(4, '\0');
    for (int i = 0; i < 4; ++i) prefixed[i] = static_cast<char>(w.size() >> (8 * i));
    out << dict_entry(w) << "\n" << dict_entry(prefixed + w) << "\n";
  }
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_make_wgx_corpus CORPUS_DIR DICTIONARY\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  sample(dir);
  tiny_block(dir);
  decoder(dir, models::Architecture::Llama, models::WeightFormat::Q4, "llama_q4");
  decoder(dir, models::Architecture::Qwen3, models::WeightFormat::F16, "qwen3_f16");
  dictionary(argv[2]);
  return 0;
}
