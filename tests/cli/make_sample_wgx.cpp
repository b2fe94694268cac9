// Writes a small .wgx model for the command-line tests: a symbolic input, a weight, a view, a
// persistent buffer updated every step.
#include <cstdio>
#include <cstring>
#include <vector>

#include "format/wgx_file.h"
#include "graph/builder.h"

int main(int argc, char** argv) {
  using namespace wgx::graph;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_sample_wgx OUT.wgx\n");
    return 2;
  }
  GraphBuilder b;
  SymId seq = b.sym("seq_len", 1, 64);
  ValueId x = b.input("x", DType::f32, {seq, 8});
  std::vector<float> w(8);
  for (int i = 0; i < 8; ++i) w[i] = 0.25f * static_cast<float>(i);
  std::vector<uint8_t> bytes(32);
  std::memcpy(bytes.data(), w.data(), 32);
  ValueId bias = b.constant("bias", DType::f32, {8}, bytes);
  ValueId y = b.op1("add", {x, bias}, {}, "add_bias");
  ValueId r = b.op1("reshape", {y}, {{"shape", Shape{seq, 2, 4}}}, "split_heads");
  ValueId count = b.mutable_buffer("count", DType::f32, {8});
  b.mutate(count, b.op1("add", {count, bias}, {}, "count_up"));
  b.output("y", r);
  wgx::format::write_wgx(argv[1], b.build(), b.weights(), {{"model", "sample"}});
  return 0;
}
