// `gpuscope record --trace nvml` samples NVML by NVML index; when the job ends
// the samples move to the CUDA ordinals the rest of the recording uses.
#include <gtest/gtest.h>
#include <string>
#include <tuple>
#include <vector>

#include "cli/nvml/nvml_poller.h"
#include "trace_formats/store/sqlite.h"
#include "tests/support/recording_builder.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope {
namespace {

std::string fresh_db(const std::string& name) { return testing::fresh_temp_db("nvml_" + name); }

void add_counter(test_support::RecordingBuilder& b, int64_t pid, int64_t device, std::string_view name, double value) {
  b.counter({.pid = pid, .device = device, .name = name, .ts = 1, .value = value});
}

// (pid, device, name, value) of every counter, by value.
std::vector<std::tuple<int64_t, int64_t, std::string, double>> counters(const std::string& path) {
  store::Connection c(path, store::Connection::Mode::kReadOnly);
  auto st = c.prepare(
      "SELECT c.pid AS pid, c.device AS device, s.value AS name, c.value AS value FROM counter c "
      "JOIN string s ON s.id = c.name_id ORDER BY c.value");
  std::vector<std::tuple<int64_t, int64_t, std::string, double>> out;
  while (st.step())
    out.emplace_back(st.int64("pid"), st.int64("device"), std::string(st.text("name")), st.real("value"));
  return out;
}

TEST(NvmlRenumber, NvmlIndicesBecomeCudaOrdinalsAndUnusedGpusGo) {
  const std::string path = fresh_db("map");
  {
    test_support::RecordingBuilder b(path);
    b.device({.id = 0, .uuid = "aa00"}).device({.id = 1, .uuid = "bb11"});  // the job saw two GPUs: CUDA 0 and 1
    add_counter(b, 7, 0, "nvml_sm_util_pct", 1);      // NVML 0 = CUDA 1
    add_counter(b, 7, 1, "nvml_sm_util_pct", 2);      // NVML 1: not the job's
    add_counter(b, 7, 2, "nvml_power_w", 3);          // NVML 2 = CUDA 0
    add_counter(b, 7, 0, "gpu_memory_used", 4);       // not NVML: untouched
    add_counter(b, 8, 2, "nvml_sm_util_pct", 5);      // another pid: untouched
  }
  cli::renumber_nvml_counters(path, 7, {"bb11", "cc22", "aa00"});
  using C = std::tuple<int64_t, int64_t, std::string, double>;
  EXPECT_EQ(counters(path), (std::vector<C>{{7, 1, "nvml_sm_util_pct", 1},
                                            {7, 0, "nvml_power_w", 3},
                                            {7, 0, "gpu_memory_used", 4},
                                            {8, 2, "nvml_sm_util_pct", 5}}));
}

TEST(NvmlRenumber, WithoutDeviceRowsNothingChanges) {
  const std::string path = fresh_db("none");
  {
    test_support::RecordingBuilder b(path);
    add_counter(b, 7, 1, "nvml_sm_util_pct", 1);
  }
  cli::renumber_nvml_counters(path, 7, {"bb11", "cc22"});
  using C = std::tuple<int64_t, int64_t, std::string, double>;
  EXPECT_EQ(counters(path), (std::vector<C>{{7, 1, "nvml_sm_util_pct", 1}}));
}

}  // namespace
}  // namespace gpuscope
