// TensorBoard's PyTorch profiler plugin (torch-tb-profiler) treats every
// folder under the logdir holding `<worker>.<number>.pt.trace.json[.gz]` files
// as a run and every file as one worker (process). We write one Chrome export
// per process there, each with its own distributedInfo rank.
#include <chrono>
#include <ctime>
#include <filesystem>
#include <algorithm>
#include <map>
#include <optional>

#include "trace_formats/common/error.h"
#include "trace_formats/export/chrome_writer.h"
#include "trace_formats/export/exporters.h"
#include "trace_formats/schema/meta_keys.h"
#include "trace_formats/store/cursor.h"

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

// Steps analyze found without step rows (from the repeating launch
// sequence): where the CPU launched each one's work, from its first launch
// (of the launches whose GPU work ended inside the step) to the next step's
// first launch, the last to its analysed end. nullopt where that does not
// give steps in order.
std::optional<std::vector<ExportOptions::Step>> launch_bounds(store::Reader& db, const ExportOptions::Window& w) {
  const std::vector<ExportOptions::Step>& steps = w.steps;
  std::vector<std::pair<int64_t, int64_t>> host(steps.size(), {INT64_MAX, INT64_MIN});
  const std::string pid = std::to_string(w.pid);
  auto q = db.query("SELECT a.start AS s, a.\"end\" AS e, g.e AS ge FROM api_call a JOIN (SELECT correlation, "
                    "\"end\" AS e FROM main.kernel WHERE pid=" + pid + " UNION ALL SELECT correlation, \"end\" FROM "
                    "main.memcpy WHERE pid=" + pid + ") g ON g.correlation = a.correlation WHERE a.pid=" + pid +
                    " AND g.e > " + std::to_string(steps.front().start) + " AND g.e <= " +
                    std::to_string(steps.back().end));
  const int s_col = q.column("s"), e_col = q.column("e"), ge_col = q.column("ge");
  while (q.step()) {
    const int64_t ge = q.int64(ge_col);
    auto it = std::lower_bound(steps.begin(), steps.end(), ge,
                               [](const ExportOptions::Step& st, int64_t t) { return st.end < t; });
    if (it == steps.end() || ge <= it->start) continue;
    auto& h = host[static_cast<size_t>(it - steps.begin())];
    h.first = std::min(h.first, q.int64(s_col));
    h.second = std::max(h.second, q.int64(e_col));
  }
  std::vector<ExportOptions::Step> out;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (host[i].first == INT64_MAX) return std::nullopt;  // a step without launches
    const int64_t end = i + 1 < steps.size() ? host[i + 1].first : std::max(steps[i].end, host[i].second);
    if (end < host[i].second || (!out.empty() && host[i].first < out.back().end)) return std::nullopt;
    out.push_back({steps[i].number, host[i].first, end});
  }
  return out;
}

// The plugin keeps a last step only where its launches caused at least 80 %
// as many GPU activities (kernels, copies, sets) as the step before's
// (StepParser: a launch belongs to the step whose window holds it whole).
// Where the last window holds fewer, but some, the window before it ends
// before its last launches instead, until it holds no more than 1.25 times
// as many: those launches then belong to no step, and the plugin counts
// analyze's steps. The file reaches to the end of the last step's GPU work
// (the plugin counts only launches whose work it sees). known_work_h200:
// analyze's last step (found from the launch sequence) ends before the one
// kernel it launched, the step before launched two.
void keep_last_step(store::Reader& db, ExportOptions::Window& w) {
  if (w.steps.size() < 2) return;
  ExportOptions::Step& prev = w.steps[w.steps.size() - 2];
  const ExportOptions::Step& last = w.steps.back();
  const std::string pid = std::to_string(w.pid);
  auto q = db.query("SELECT a.start AS s, a.\"end\" AS e, count(*) AS n, max(g.e) AS ge FROM main.api_call a JOIN "
                    "(SELECT correlation AS c, \"end\" AS e FROM main.kernel WHERE pid=" + pid +
                    " UNION ALL SELECT correlation, \"end\" FROM main.memcpy WHERE pid=" + pid +
                    " UNION ALL SELECT correlation, \"end\" FROM main.memset WHERE pid=" + pid +
                    ") g ON g.c = a.correlation WHERE a.pid=" + pid + " AND a.start >= " + std::to_string(prev.start) +
                    " AND a.\"end\" <= " + std::to_string(last.end) + " GROUP BY a.id ORDER BY a.start");
  struct Launch {
    int64_t start, end, n, gpu_end;
  };
  std::vector<Launch> launches;
  const int s_col = q.column("s"), e_col = q.column("e"), n_col = q.column("n"), ge_col = q.column("ge");
  while (q.step()) launches.push_back({q.int64(s_col), q.int64(e_col), q.int64(n_col), q.int64(ge_col)});
  auto held = [&](int64_t from, int64_t to) {
    int64_t n = 0;
    for (const Launch& l : launches)
      if (l.start >= from && l.end <= to) n += l.n;
    return n;
  };
  const int64_t in_last = held(last.start, last.end);
  if (in_last == 0) return;
  // The GPU work of the last step's launches in the file, where analyze's
  // bounds end before it (steps found from the launch sequence).
  for (const Launch& l : launches)
    if (l.start >= last.start && l.end <= last.end) w.end = std::max(w.end, l.gpu_end);
  // From the latest launch of the step before back: its window ends where that launch starts.
  for (auto it = launches.rbegin(); it != launches.rend() && 4 * held(prev.start, prev.end) > 5 * in_last; ++it)
    if (it->start > prev.start && it->end <= prev.end) prev.end = it->start;
}

// TensorBoard takes a ProfilerStep#N event for where the CPU ran step N, as
// torch.profiler writes it: it assigns each launch to the step whose span
// holds it and then extends the step to the end of the GPU work those
// launches caused, as analyze does. Given analyze's steps (already extended
// to their GPU work), it assigned a step's early launches to the step before,
// and dropped a last step left with few. So its files get the steps as the
// step table has them, and a window that starts where the first analysed
// step's CPU work started, so that its launches are in the file; steps that
// are not in the step table (found by analyze) where their launches were
// made (launch_bounds), else analyze's bounds; and the last step kept
// (keep_last_step).
ExportOptions tensorboard_options(store::Reader& db, const ExportOptions& opt) {
  ExportOptions out = opt;
  if (!opt.window || opt.window->steps.empty()) return out;
  ExportOptions::Window& w = *out.window;
  // By number (numbers may repeat: a loop that restarts its count), each row's start and end.
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> recorded;
  store::Cursor<store::rec::Step> q(db.db(), {store::rec::Step::kNumber, store::rec::Step::kStart,
                                              store::rec::Step::kEnd},
                                    "WHERE pid=" + std::to_string(w.pid));
  while (q.next())
    if (!q->null(store::rec::Step::kStart) && !q->null(store::rec::Step::kEnd))
      recorded[q->number].push_back({q->start, std::max(q->start, q->end)});
  std::vector<ExportOptions::Step> cpu;
  for (const auto& s : w.steps) {
    // The row of this number that analyze's step starts in (analyze starts a
    // step at its row's start, or later at the previous step's GPU end).
    const std::pair<int64_t, int64_t>* row = nullptr;
    if (auto it = recorded.find(s.number); it != recorded.end())
      for (const auto& r : it->second)
        if (r.first <= s.start && (!row || r.first > row->first)) row = &r;
    if (!row || (!cpu.empty() && row->first < cpu.back().end)) {
      cpu.clear();
      break;
    }
    cpu.push_back({s.number, row->first, row->second});
  }
  if (cpu.empty() && recorded.empty()) {
    if (auto launched = launch_bounds(db, w)) cpu = std::move(*launched);
  }
  if (!cpu.empty()) {  // else analyze's bounds
    w.start = std::min(w.start, cpu.front().start);
    w.end = std::max(w.end, cpu.back().end);
    w.steps = std::move(cpu);
  }
  keep_last_step(db, w);
  return out;
}

}  // namespace

ExportStats export_tensorboard(store::Reader& db, const std::string& logdir, const std::string& run,
                               const ExportOptions& opt) {
  namespace fs = std::filesystem;
  auto t0 = std::chrono::steady_clock::now();
  if (run.empty() || run == "." || run == ".." || run.find('/') != std::string::npos)
    throw Error(run + ": not a usable run name (use --run NAME)");
  const ExportOptions tb = tensorboard_options(db, opt);
  std::vector<GpuscopeMark> marks = gpuscope_marks(db, tb);
  WindowedTables windowed(db, tb);
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
      write_chrome_file(model, path, tb, marks, stats);
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
