// tests/data/mlp_h200.db (gpuscope record) and mlp_h200_torch_profiler.json.gz
// (torch.profiler) come from the same script with the same arguments on the
// H200 (samples/torch/train_mlp.py --steps 20 --sleep-ms 0.1). The importer
// must read torch.profiler's trace into what the collector recorded: the same
// kernels by name and number, the same steps and DataLoader waits, and kernel
// time within 1 % (two runs of the same work).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "trace_formats/import/torch_import.h"
#include "trace_formats/store/sqlite.h"
#include "tests/trace_formats/formats_test_util.h"

namespace gpuscope::formats {
namespace {

const std::filesystem::path kData = std::filesystem::path(GPUSCOPE_SOURCE_DIR) / "tests" / "data";

std::map<std::string, int64_t> kernels_by_name(const std::string& db) {
  store::Connection c(db, store::Connection::Mode::kReadOnly);
  std::map<std::string, int64_t> out;
  auto st =
      c.prepare("SELECT s.value AS name, count(*) AS n FROM kernel k JOIN string s ON s.id = k.name_id GROUP BY 1");
  const int name = st.column("name"), n = st.column("n");
  while (st.step()) out[std::string(st.text(name))] = st.int64(n);
  return out;
}

int64_t query(const std::string& db, const std::string& sql) {
  store::Connection c(db, store::Connection::Mode::kReadOnly);
  return c.query_int(sql).value_or(-1);
}

TEST(H200Pair, ImportedTorchProfilerTraceMatchesTheRecording) {
  const std::string recorded = (kData / "mlp_h200.db").string();
  const std::string trace = (kData / "mlp_h200_torch_profiler.json.gz").string();
  if (!std::filesystem::exists(recorded) || !std::filesystem::exists(trace)) GTEST_SKIP() << "H200 pair not committed";
  test::TempDir tmp;
  const std::string imported = tmp.file("imported.db");
  import_torch_trace(trace, imported, {});

  EXPECT_EQ(query(imported, "SELECT count(*) FROM kernel"), 918);
  EXPECT_EQ(kernels_by_name(imported), kernels_by_name(recorded));
  const double t_rec = static_cast<double>(query(recorded, "SELECT sum(\"end\" - start) FROM kernel"));
  const double t_imp = static_cast<double>(query(imported, "SELECT sum(\"end\" - start) FROM kernel"));
  EXPECT_NEAR(t_imp / t_rec, 1.0, 0.01) << "recorded " << t_rec << " ns, imported " << t_imp << " ns";
  // 22 ProfilerStep#N against 22 optimizer steps: the empty last ProfilerStep#N,
  // opened by the final prof.step(), is not imported as a step.
  EXPECT_EQ(query(imported, "SELECT count(*) FROM step"), 22);
  EXPECT_EQ(query(recorded, "SELECT count(*) FROM step"), 22);
  EXPECT_EQ(query(imported, "SELECT count(*) FROM range WHERE source = 3"),
            query(recorded, "SELECT count(*) FROM range WHERE source = 3"));
  // Every kernel launched by an op in both: the external-id links survive the import.
  EXPECT_EQ(query(imported,
                  "SELECT count(*) FROM kernel k JOIN external_correlation e ON e.pid = k.pid AND e.correlation = "
                  "k.correlation JOIN op o ON o.pid = e.pid AND o.external_id = e.external_id"),
            918);
}

}  // namespace
}  // namespace gpuscope::formats
