// report/format.h: the numbers both report families print. Each expectation
// is a string a committed golden report holds somewhere.
#include "report/format.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope::report {
namespace {

TEST(ReportFormat, Times) {
  EXPECT_EQ(ms(12'345'678), "12.346");
  EXPECT_EQ(ms_unit(0.5), "0.500 ms");
  EXPECT_EQ(seconds(1'234'567'000), "1.234567 s");
  EXPECT_EQ(duration(12.345), "12.345 ms");
  EXPECT_EQ(duration(0.01325), "13.25 us");
  EXPECT_EQ(duration(0.00031), "310 ns");
  EXPECT_EQ(duration(0), "0.000 ms");
  EXPECT_EQ(duration(-2), "-2.000 ms");
}

TEST(ReportFormat, SignFollowsThePrintedValue) {
  EXPECT_EQ(signed_fixed(1.25, 3), "+1.250");
  EXPECT_EQ(signed_fixed(-0.3, 3), "-0.300");
  EXPECT_EQ(signed_fixed(0.0004, 3), "0.000");
  EXPECT_EQ(signed_fixed(-0.0004, 3), "0.000");
  EXPECT_EQ(signed_fixed(NAN, 3), "n/a");
  EXPECT_EQ(signed_percent(0.124), "+12.4 %");
  EXPECT_EQ(signed_percent(-0.00001), "0.0 %");
  EXPECT_EQ(optional_percent(std::nullopt), "");
  EXPECT_EQ(optional_percent(-0.5), "-50.0 %");
  EXPECT_EQ(signed_bytes(1.5e9), "+1.50 GB");
  EXPECT_EQ(signed_bytes(0.2), "0 B");
}

TEST(ReportFormat, PlusPercentSignsZero) {
  // analyze's tracing cost: a job gpuscope did not slow reads "+0.0 %".
  EXPECT_EQ(plus_percent(22.74), "+22.7 %");
  EXPECT_EQ(plus_percent(0), "+0.0 %");
  EXPECT_EQ(plus_percent(-3.14), "-3.1 %");
  EXPECT_EQ(plus_percent(1.234, 2), "+1.23 %");
}

TEST(ReportFormat, Statistics) {
  EXPECT_EQ(p_value(0.00001), "< 0.0001");
  EXPECT_EQ(p_value(0.031), "0.031");
  EXPECT_EQ(p_value(0.5), "0.50");
  EXPECT_EQ(p_is(0.031), "= 0.031");
  EXPECT_EQ(p_is(0.00001), "< 0.0001");
  EXPECT_EQ(metric(12.5, "ms"), "12.500 ms");
  EXPECT_EQ(metric(1.5e9, "bytes"), "1.50 GB");
  EXPECT_EQ(metric(0.5, "fraction"), "50.0 %");
  EXPECT_EQ(metric(3, "count"), "3");
  EXPECT_EQ(metric(2.5, "count"), "2.50");
}

TEST(ReportFormat, Columns) {
  EXPECT_EQ(pad("ab", 4), "ab  ");
  EXPECT_EQ(lpad("ab", 4), "  ab");
  EXPECT_EQ(pad("abcdef", 4), "abcdef");  // never cut
  EXPECT_EQ(lpad("abcdef", 4), "abcdef");
  EXPECT_EQ(text_list({"a\x1b]0;x", "b"}), "  - a?]0;x\n  - b\n");  // control bytes shown as '?'
}

}  // namespace
}  // namespace gpuscope::report
