// Stop strings on streamed pieces: held back while they may begin a stop string, cut before it.
#include <gtest/gtest.h>

#include "llm/stop_strings.h"

namespace wgx::llm {
namespace {

TEST(StopMatcher, ReleasesTextThatCannotStartAStopString) {
  StopMatcher m({"END", "\n\n"});
  EXPECT_EQ(m.push("hello"), "hello");
  EXPECT_EQ(m.push(" E"), " ");   // "E" may begin END
  EXPECT_EQ(m.push("x"), "Ex");   // it did not
  EXPECT_EQ(m.push("\n"), "");    // may begin "\n\n"
  EXPECT_EQ(m.push("EN"), "\n");  // "\nEN": "\n" can no longer begin "\n\n", "EN" may begin END
  EXPECT_FALSE(m.matched());
  EXPECT_EQ(m.flush(), "EN");
}

TEST(StopMatcher, CutsBeforeAStopStringSplitOverPieces) {
  StopMatcher m({"END"});
  EXPECT_EQ(m.push("abcE"), "abc");
  EXPECT_EQ(m.push("N"), "");
  EXPECT_EQ(m.push("Dtail"), "");
  EXPECT_TRUE(m.matched());
  EXPECT_EQ(m.push("more"), "");
}

TEST(StopMatcher, TheEarliestMatchWins) {
  StopMatcher m({"cd", "bcde"});
  EXPECT_EQ(m.push("abcdef"), "a");  // "bcde" starts first
  StopMatcher n({"xyz", "y"});
  EXPECT_EQ(n.push("axyz"), "a");  // "xyz" starts first
}

TEST(StopMatcher, NoStopStringsPassEverything) {
  StopMatcher m({"", ""});
  EXPECT_EQ(m.push("abc"), "abc");
  EXPECT_EQ(m.flush(), "");
}

}  // namespace
}  // namespace wgx::llm
