// HtaFit (trace_formats/export/hta_fit.h): after its map no event ends before
// it starts under HTA's rounding (ts up, ts + dur down to whole
// microseconds), no point moves by a microsecond or more, and the order of the
// points (so every nesting) is kept.
#include "trace_formats/export/hta_fit.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace gpuscope::formats {
namespace {

using Spans = std::vector<std::pair<int64_t, int64_t>>;

// Every event fitted, within a microsecond, the order of all points kept.
void expect_fitted(const Spans& spans, const HtaFit& fit) {
  std::vector<int64_t> points;
  for (const auto& [s, e] : spans) {
    EXPECT_FALSE(hta_negative(fit(s), fit(e))) << s << ".." << e << " -> " << fit(s) << ".." << fit(e);
    points.push_back(s);
    points.push_back(e);
  }
  for (int64_t a : points) {
    EXPECT_LT(std::abs(fit(a) - a), 1000);
    for (int64_t b : points) {
      if (a > b) continue;
      EXPECT_LE(fit(a), fit(b)) << a << " <= " << b;
    }
  }
}

TEST(HtaFit, TellsTheEventsHtasRoundingGivesANegativeDuration) {
  EXPECT_TRUE(hta_negative(5'100, 5'900));
  EXPECT_TRUE(hta_negative(5'100, 5'100));  // an instant off a whole microsecond
  EXPECT_FALSE(hta_negative(5'000, 5'900));
  EXPECT_FALSE(hta_negative(5'100, 6'000));
  EXPECT_FALSE(hta_negative(5'900, 6'100));  // rounds to [6, 6]
  EXPECT_FALSE(hta_negative(5'000, 5'000));
}

TEST(HtaFit, SiblingsInsideOneMicrosecondNestAndTouch) {
  // A parent from 1.0 to 9.0 us, three calls inside the 5th microsecond, a
  // child of the second, and an event crossing into the 6th.
  const Spans spans = {{1'000, 9'000}, {5'100, 5'200}, {5'300, 5'500}, {5'350, 5'450}, {5'600, 5'700}, {5'800, 6'300}};
  const HtaFit fit(spans, {});
  EXPECT_EQ(fit.unfixed(), 0);
  expect_fitted(spans, fit);
  EXPECT_EQ(fit(1'000), 1'000);  // whole microseconds stay
  EXPECT_EQ(fit(9'000), 9'000);
  EXPECT_EQ(fit(6'300), 6'300);  // outside the microsecond
}

TEST(HtaFit, MovesTheFewerPoints) {
  const HtaFit late({{5'800, 5'900}}, {});  // near the microsecond's end: ends there
  EXPECT_EQ(late(5'800), 5'800);
  EXPECT_EQ(late(5'900), 6'000);
  const HtaFit early({{5'100, 5'300}}, {});
  EXPECT_EQ(early(5'100), 5'000);
  EXPECT_EQ(early(5'300), 5'300);
}

TEST(HtaFit, NeverCrossesAFixedPoint) {
  // A step starts at 5.4 us: the call before it ends at the microsecond's
  // beginning side, the one after it on its end side, the step stays.
  const Spans spans = {{5'100, 5'300}, {5'500, 5'700}};
  const HtaFit fit(spans, {5'400, 20'000});
  EXPECT_EQ(fit.unfixed(), 0);
  expect_fitted(spans, fit);
  EXPECT_EQ(fit(5'400), 5'400);
  EXPECT_EQ(fit(5'100), 5'000);
  EXPECT_EQ(fit(5'700), 6'000);
  // Boxed in between two fixed points: left as it is, and counted.
  const HtaFit boxed({{5'300, 5'500}}, {5'200, 5'600});
  EXPECT_EQ(boxed.unfixed(), 1);
  EXPECT_EQ(boxed(5'300), 5'300);
  // Between two soft ones (steps of another row) it crosses the nearer.
  const HtaFit soft({{5'300, 5'500}}, {}, {5'200, 5'600});
  EXPECT_EQ(soft.unfixed(), 0);
  EXPECT_EQ(soft(5'300), 5'000);
}

}  // namespace
}  // namespace gpuscope::formats
