// terminal_safe (common/terminal_text.h): control bytes from input data never
// reach the terminal raw.
#include <gtest/gtest.h>

#include "common/terminal_text.h"

namespace gpuscope {
namespace {

TEST(TerminalText, ControlBytesAreShownAsHex) {
  EXPECT_EQ(terminal_safe("evil\x1b]0;pwned\x07"), "evil\\x1b]0;pwned\\x07");
  EXPECT_EQ(terminal_safe(std::string("a\0b\x7f", 4)), "a\\x00b\\x7f");
  EXPECT_EQ(terminal_safe("line\nnext\t"), "line\\x0anext\\x09");
  EXPECT_EQ(terminal_safe("line\nnext\t", true), "line\nnext\t");
  EXPECT_EQ(terminal_safe("caf\xc3\xa9 \xff"), "caf\xc3\xa9 \xff");  // not a control: left to the UTF-8 layer
}

}  // namespace
}  // namespace gpuscope
