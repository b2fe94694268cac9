// embedding with a q4gsw table: rows dequantized exactly as the host does (f32 scales: bit for
// bit; f16 scales: f16 output within one rounding), ids outside the table give zero rows, i64
// ids, group 128, and a symbolic number of ids across executions.
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
  s.prog->execute();
  s.embeddings.verify(*s.prog, "e_f32");
  s.embeddings.verify(*s.prog, "e_g128");
  s.embeddings.verify(*s.prog, "e_f16_sym");
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
