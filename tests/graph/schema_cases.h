// Op inference cases declared as data: an op, its inputs and attributes, and what the schema must
// say: the output type ("f32[11, 37]") or, after a '!', a piece of the error message.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph_test_util.h"

namespace wgx::graph::testing {

struct SchemaCase {
  std::string name;  // the test's name: letters, digits and '_'
  std::string op;
  std::vector<Value> inputs;
  Attrs attrs;
  std::string expect;
};

// Keeps test names readable: GoogleTest prints a parameter's bytes otherwise.
inline void PrintTo(const SchemaCase& c, std::ostream* os) { *os << c.op; }

const std::vector<SchemaCase>& elementwise_cases();
const std::vector<SchemaCase>& shape_cases();
const std::vector<SchemaCase>& transformer_cases();

inline void check_case(const SchemaCase& c) {
  const std::string got = infer_text(c.op, c.inputs, c.attrs);
  if (!c.expect.empty() && c.expect[0] == '!') {
    ASSERT_EQ(got.rfind("error: ", 0), 0u) << c.op << " should fail but gave " << got;
    EXPECT_NE(got.find(c.expect.substr(1)), std::string::npos)
        << "error should mention '" << c.expect.substr(1) << "': " << got;
  } else {
    EXPECT_EQ(got, c.expect);
  }
}

inline std::string case_name(const ::testing::TestParamInfo<SchemaCase>& info) {
  return info.param.name;
}

}  // namespace wgx::graph::testing
