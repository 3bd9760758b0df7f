// The calibration tables: every committed table parses and has what the fixes
// read; a malformed one is refused naming the file; curves interpolate in log x.
#include <gtest/gtest.h>

#include "analyzer/whatif/calibration.h"
#include "trace_formats/common/error.h"

namespace gpuscope::testing {
namespace {

using analyzer::whatif::Bound;
using analyzer::whatif::calibrations;
using analyzer::whatif::parse_calibration;

// What analyzer/whatif/fixes.cpp reads from a table.
constexpr const char* kCurves[] = {"gemm_fp32_to_bf16", "gemm_tf32_to_bf16", "conv_fp32_to_bf16",
                                   "conv_nchw_to_nhwc_fp32", "conv_nchw_to_nhwc_bf16", "batchnorm_nchw_to_nhwc",
                                   "groupnorm_nchw_to_nhwc", "batchnorm_fp32_to_bf16", "groupnorm_fp32_to_bf16",
                                   "layernorm_fp32_to_bf16", "elementwise_fp32_to_bf16", "rnn_fp32_to_bf16",
                                   "chain_fusion", "optimizer_fused"};
constexpr const char* kCosts[] = {"eager_op_cpu_us", "autocast_op_cpu_us", "cast_kernel_floor_us",
                                  "graph_launch_cpu_us", "graph_node_gpu_us", "compiled_kernel_cpu_us",
                                  "dataloader_next_us", "pinned_h2d_gbps", "fused_to_foreach_launches"};

TEST(WhatIfCalibration, EveryCommittedTableParsesAndHasWhatTheFixesRead) {
  ASSERT_FALSE(calibrations().empty());
  int generic = 0;
  for (const auto& cal : calibrations()) {
    generic += !cal.measured;
    for (const char* c : kCurves) EXPECT_TRUE(cal.curves.count(c)) << cal.file << " lacks curve " << c;
    for (const char* c : kCosts) EXPECT_TRUE(cal.costs.count(c)) << cal.file << " lacks cost " << c;
    if (cal.measured) {
      EXPECT_FALSE(cal.match.empty()) << cal.file;
    }
  }
  EXPECT_EQ(generic, 1) << "exactly one table stands in for unknown GPUs";
  EXPECT_FALSE(analyzer::whatif::calibration_for("Some Future GPU").measured);
}

TEST(WhatIfCalibration, CurvesInterpolateInLogXAndClampAtTheEnds) {
  const auto cal = parse_calibration(R"({"schema": "gpuscope-calibration/1", "match": "X",
      "curves": {"c": {"points": [[10, 1.0, 0.8, 1.2], [1000, 0.5, 0.4, 0.6]]}}})", "t.json");
  const auto& c = cal.curves.at("c");
  EXPECT_DOUBLE_EQ(c.at(1), 1.0);
  EXPECT_DOUBLE_EQ(c.at(1e6), 0.5);
  EXPECT_NEAR(c.at(100), 0.75, 1e-9);  // halfway in log x
  EXPECT_NEAR(c.at(100, Bound::kLo), 0.6, 1e-9);
  EXPECT_DOUBLE_EQ(cal.ratio("missing", 5, Bound::kMid, 0.3), 0.3);
}

TEST(WhatIfCalibration, AMalformedTableIsRefusedNamingTheFile) {
  auto message = [](const char* json) {
    try {
      parse_calibration(json, "bad.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("{").find("bad.json: not JSON"), std::string::npos);
  EXPECT_NE(message(R"({"schema": "other"})").find("bad.json: not a calibration table"), std::string::npos);
  EXPECT_NE(message(R"({"schema": "gpuscope-calibration/1", "curves": {"c": {"points": [[1, 0.5, 0.6, 0.7]]}}})")
                .find("lo <= ratio <= hi"),
            std::string::npos);
  EXPECT_NE(message(R"({"schema": "gpuscope-calibration/1", "curves": {"c": {"points": [[5, 1, 1, 1], [2, 1, 1, 1]]}}})")
                .find("not sorted"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuscope::testing
