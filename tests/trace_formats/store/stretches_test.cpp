// A traced stretch left open by a killed job (store/stretches.cpp), on
// synthetic recordings: closed at the last event when ops or API calls follow
// the last closed stretch, and not otherwise.
#include <gtest/gtest.h>

#include <string>

#include "trace_formats/schema/enums.h"
#include "trace_formats/store/place_ops.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/stretches.h"
#include "tests/support/recording_builder.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope {
namespace {

constexpr int64_t kWindow = schema::range_source::sampling_window;

// Steps of 100 ns from 0: steps 0-2 traced (one stretch, 0-300), 3-7 untraced.
void control_stretch(test_support::RecordingBuilder& b) {
  b.process(test_support::python_process(10));
  b.at(10, 10);
  for (int i = 0; i < 8; ++i) b.step(i, i * 100, i * 100 + 100);
  b.range({.source = kWindow, .name = "gpuscope: traced", .start = 0, .end = 300});
  b.op({.name = "aten::mm", .start = 10, .end = 20});
}

TEST(Stretches, OpsAfterTheLastStretchOpenOneFromTheirStepToTheLastEvent) {
  const std::string path = testing::fresh_temp_db("stretches_open");
  {
    test_support::RecordingBuilder b(path);
    control_stretch(b);
    for (int i = 8; i < 12; ++i) b.step(i, i * 100, i * 100 + 100);  // traced again, killed in step 12
    b.op({.name = "aten::mm", .start = 810, .end = 820});
    b.op({.name = "aten::mm", .start = 1'110, .end = 1'120});
    b.range({.name = "nvtx", .start = 1'150, .end = 1'190});
  }
  store::Reader r(path);
  const auto open = store::open_traced_stretch(r.db(), 10);
  ASSERT_TRUE(open);
  EXPECT_EQ(open->first, 800);
  EXPECT_EQ(open->second, 1'200);  // step 11's end
  EXPECT_FALSE(store::open_traced_stretch(r.db(), 99));  // another process: nothing
  const store::TracedStretches all = store::traced_stretches(r.db());
  ASSERT_EQ(all.stretches.size(), 2u);
  EXPECT_EQ(all.closed_by_reader, 1);
  EXPECT_EQ(all.stretches[1], open);
}

TEST(Stretches, AnApiCallAloneAlsoOpensOne) {
  const std::string path = testing::fresh_temp_db("stretches_api");
  {
    test_support::RecordingBuilder b(path);
    control_stretch(b);
    b.api({.name = "cudaLaunchKernel", .start = 750, .end = 760});
  }
  store::Reader r(path);
  const auto open = store::open_traced_stretch(r.db(), 10);
  ASSERT_TRUE(open);
  EXPECT_EQ(open->first, 700);
  EXPECT_EQ(open->second, 800);
}

TEST(Stretches, NoneWhenNothingTracedFollowsTheLastStretch) {
  const std::string path = testing::fresh_temp_db("stretches_closed");
  {
    test_support::RecordingBuilder b(path);
    control_stretch(b);
    // Killed inside the control stretch: steps, ranges and ops placed by position only.
    b.range({.name = "nvtx", .start = 400, .end = 450});
    b.op({.name = "aten::mm", .start = 510, .end = 520, .external_id = store::kPlacedOpIdBase + 1});
  }
  store::Reader r(path);
  EXPECT_FALSE(store::open_traced_stretch(r.db(), 10));
  EXPECT_EQ(store::traced_stretches(r.db()).closed_by_reader, 0);
}

TEST(Stretches, NoneWithoutAClosedStretch) {
  // Never switched tracing (or killed in its first stretch): everything counts as traced already.
  const std::string path = testing::fresh_temp_db("stretches_none");
  {
    test_support::RecordingBuilder b(path);
    b.process(test_support::python_process(10));
    b.at(10, 10);
    b.step(0, 0, 100);
    b.op({.name = "aten::mm", .start = 10, .end = 20});
  }
  store::Reader r(path);
  EXPECT_FALSE(store::open_traced_stretch(r.db(), 10));
  EXPECT_TRUE(store::traced_stretches(r.db()).stretches.empty());
}

}  // namespace
}  // namespace gpuscope
