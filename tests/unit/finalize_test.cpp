// What `gpuscope record` does to the database after the job: waits get the
// thread of the API call that waited (CUPTI's synchronization records have none).
#include <gtest/gtest.h>
#include <string>

#include "cli/record_support.h"
#include "store/sqlite.h"
#include "store/writer.h"
#include "tests/unit/temp_db.h"

namespace gpuscope {
namespace {

TEST(Finalize, WaitsGetTheThreadOfTheirApiCall) {
  const std::string path = testing::fresh_temp_db("finalize");
  {
    store::Writer w(path);
    w.begin();
    for (int64_t corr : {10, 11, 12}) {
      store::ApiCallRow a;
      a.pid = 5;
      a.tid = 100 + corr;
      a.name = "cudaStreamSynchronize";
      a.correlation = corr;
      w.add(a);
    }
    store::ApiCallRow other;  // same correlation, another process
    other.pid = 6, other.tid = 999, other.name = "cudaDeviceSynchronize", other.correlation = 11;
    w.add(other);
    for (int64_t corr : {11, 12, 13}) {  // 13: its call was not recorded
      store::SyncRow s;
      s.pid = 5;
      s.correlation = corr;
      w.add(s);
    }
    w.commit();
  }
  cli::finalize_recording(path);
  store::Connection c(path, store::Connection::Mode::kReadOnly);
  auto st = c.prepare("SELECT correlation, coalesce(tid, -1) FROM sync ORDER BY correlation");
  std::vector<std::pair<int64_t, int64_t>> got;
  while (st.step()) got.emplace_back(st.int64(0), st.int64(1));
  EXPECT_EQ(got, (std::vector<std::pair<int64_t, int64_t>>{{11, 111}, {12, 112}, {13, -1}}));
}

}  // namespace
}  // namespace gpuscope
