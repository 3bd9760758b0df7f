// TensorBoard's PyTorch profiler plugin (torch-tb-profiler) treats every
// folder under the logdir holding `<worker>.<number>.pt.trace.json[.gz]` files
// as a run and every file as one worker (process). We write one Chrome export
// per process there, each with its own distributedInfo rank.
#include <chrono>
#include <ctime>
#include <filesystem>

#include "trace_formats/common/error.h"
#include "trace_formats/export/chrome_writer.h"
#include "trace_formats/export/exporters.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::formats {

namespace {

// Host names may hold dots and other bytes the plugin's file-name pattern or
// a file system would trip over.
std::string safe_name(std::string_view s, std::string_view fallback) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    out += ok ? c : '_';
  }
  return out.empty() ? std::string(fallback) : out;
}

}  // namespace

ExportStats export_tensorboard(store::Reader& db, const std::string& logdir, const std::string& run,
                               const ExportOptions& opt) {
  namespace fs = std::filesystem;
  auto t0 = std::chrono::steady_clock::now();
  if (run.empty() || run == "." || run == ".." || run.find('/') != std::string::npos)
    throw Error(run + ": not a usable run name (use --run NAME)");
  std::vector<GpuscopeMark> marks = gpuscope_marks(db, opt);
  WindowedTables windowed(db, opt);
  ExportModel all(db);
  std::vector<ProcessInfo> procs = all.processes();
  if (opt.only_pid) {
    std::erase_if(procs, [&](const ProcessInfo& p) { return p.pid != *opt.only_pid; });
  }
  if (procs.empty()) throw Error(db.db().path() + ": no processes to export");
  fs::path dir = fs::path(logdir) / run;
  std::error_code ec;
  // The folders this export creates, deepest first, removed again (when
  // still empty) if it fails: a failed export leaves no empty LOGDIR/RUN.
  std::vector<fs::path> created;
  for (fs::path p = dir; !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path()) {
    created.push_back(p);
    if (p == p.parent_path()) break;
  }
  auto remove_created = [&] {
    for (const fs::path& p : created) fs::remove(p, ec);  // fails, harmlessly, on a folder not empty
  };
  fs::create_directories(dir, ec);
  if (ec) {
    const std::string why = ec.message();
    remove_created();
    throw Error(dir.string() + ": cannot create: " + why);
  }

  int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  std::string recording_host = db.meta(meta_key::kHost);
  ExportStats stats;
  try {
    for (const auto& p : procs) {
      int64_t ms = p.start_utc_ns > 0 ? p.start_utc_ns / 1'000'000
                   : all.origin_utc_ns() ? *all.origin_utc_ns() / 1'000'000 : now_ms;
      std::string worker = safe_name(p.host.empty() ? recording_host : p.host, "host") + "_" + std::to_string(p.pid);
      std::string path = (dir / (worker + "." + std::to_string(ms) + ".pt.trace.json.gz")).string();
      ExportModel model(db, p.pid);
      model.set_distributed(p.rank != INT64_MIN ? p.rank : p.index,
                            p.world_size != INT64_MIN ? p.world_size : static_cast<int64_t>(all.processes().size()));
      write_chrome_file(model, path, opt, marks, stats);
    }
  } catch (...) {
    for (const auto& f : stats.files) fs::remove(f, ec);
    remove_created();
    throw;
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace gpuscope::formats
