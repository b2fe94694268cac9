// embedding with a q4gsw table: rows dequantized exactly as the host does (f32 output: bit for
// bit; f16 output within one rounding), in the scale dtype or the one the dtype attribute asks
// for, ids outside the table give zero rows, i64 ids, group 128, and a symbolic number of ids
// across executions.
#include <climits>

#include "quant_program.h"

namespace wgx::runtime {
namespace {

using testing::shared;

TEST(QuantEmbedding, GathersDequantizedRowsAndZeroesOutOfRangeIds) {
  testing::Shared& s = shared();
  std::vector<int64_t> ids(39);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 7) % 37);
  ids[0] = 36;
  ids[5] = -1;
  ids[6] = 37;
  ids[20] = INT_MIN;
  ids[38] = INT_MAX;
  s.embeddings.set(*s.prog, "e_f32", ids);
  s.embeddings.set(*s.prog, "e_g128", {10, 0, 11, 3, -2});
  s.embeddings.set(*s.prog, "e_f16_sym", {5, 112, 0});
  s.embeddings.set(*s.prog, "e_f16_to_f32", {40, 0, -3, 7, 41, 12, 12, 39, 1});
  s.embeddings.set(*s.prog, "e_f32_to_f16", {22, 0, 5, 23, -1, 11, 3, 3, 9});
  s.prog->execute();
  for (const char* name : {"e_f32", "e_g128", "e_f16_sym", "e_f16_to_f32", "e_f32_to_f16"}) {
    s.embeddings.verify(*s.prog, name);
  }
}

TEST(QuantEmbedding, SymbolicIdCountResizes) {
  testing::Shared& s = shared();
  for (int64_t n : {37, 1, 6}) {
    std::vector<int64_t> ids(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ids[i] = (i * 31 + n) % 113;
    if (n == 6) ids.back() = 113;  // one past the end
    s.embeddings.set(*s.prog, "e_f16_sym", ids);
    s.prog->execute();
    s.embeddings.verify(*s.prog, "e_f16_sym");
  }
}

}  // namespace
}  // namespace wgx::runtime
