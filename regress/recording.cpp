// Loading one side of a diff: a gpuscope database, or a torch.profiler trace
// imported into a temporary one, analysed with every kernel and op kept.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "common/atomic_file.h"
#include "common/error.h"
#include "import/torch_import.h"
#include "regress/diff.h"
#include "store/reader.h"

namespace gpuscope::regress {
namespace {

// SQLite files start with this; anything starting with '{' or '[' or gzip's
// magic is taken for a torch.profiler (Chrome trace) export.
bool looks_like_trace(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  char head[16] = {};
  f.read(head, sizeof head);
  const auto n = static_cast<size_t>(f.gcount());
  if (n >= 15 && std::string(head, 15) == "SQLite format 3") return false;
  if (n >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b) return true;
  size_t i = 0;
  if (n >= 3 && static_cast<unsigned char>(head[0]) == 0xef && static_cast<unsigned char>(head[1]) == 0xbb &&
      static_cast<unsigned char>(head[2]) == 0xbf)
    i = 3;  // UTF-8 byte order mark
  while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  return i < n && (head[i] == '{' || head[i] == '[');
}

std::string temp_db_path() {
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/gpuscope-diff-XXXXXX.db";
  const int fd = mkstemps(tmpl.data(), 3);
  if (fd < 0)
    throw Error(tmpl + ": cannot create a temporary database for the imported trace: " + std::strerror(errno));
  close(fd);
  register_temp_path(tmpl, true);  // removed also when Ctrl-C ends the diff
  return tmpl;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
}

void remove_db(const std::string& p) {
  unregister_temp_path(p);
  std::remove(p.c_str());
  std::remove((p + "-wal").c_str());
  std::remove((p + "-shm").c_str());
  std::remove((p + "-journal").c_str());
}

}  // namespace

Recording::Recording(Recording&& o) noexcept
    : path_(std::move(o.path_)), db_path_(std::move(o.db_path_)), analysis_(std::move(o.analysis_)), owns_db_(o.owns_db_) {
  o.owns_db_ = false;
}

Recording& Recording::operator=(Recording&& o) noexcept {
  if (this != &o) {
    if (owns_db_) remove_db(db_path_);
    path_ = std::move(o.path_);
    db_path_ = std::move(o.db_path_);
    analysis_ = std::move(o.analysis_);
    owns_db_ = o.owns_db_;
    o.owns_db_ = false;
  }
  return *this;
}

Recording::~Recording() {
  if (owns_db_) remove_db(db_path_);
}

Recording Recording::load(const std::string& path, const analyzer::Options& options, int64_t min_steps) {
  Recording r;
  r.path_ = r.db_path_ = path;
  if (looks_like_trace(path)) {
    r.db_path_ = temp_db_path();
    r.owns_db_ = true;
    formats::ImportOptions io;
    io.force = true;  // replaces the empty placeholder mkstemps made
    io.progress = options.progress;
    try {
      formats::import_torch_trace(path, r.db_path_, io);
    } catch (const Error& e) {
      std::string msg = e.what();
      replace_all(msg, r.db_path_, path);
      throw Error(msg);
    }
  }
  try {
    store::Reader reader(r.db_path_);
    analyzer::Options o = options;
    o.top = 1 << 30;  // every kernel and op: a name missing on one side must be a real absence
    r.analysis_ = analyzer::analyze(reader, o);
  } catch (const Error& e) {
    std::string msg = e.what();
    replace_all(msg, r.db_path_, path);
    throw Error(msg);
  }
  const analyzer::Summary& s = r.analysis_.summary;
  if (s.step_source == analyzer::StepSource::kWholeRecording)
    throw Error(path + ": no steps found (no step table, no repeating NVTX or record_function range); step times "
                       "need the torch plugin's optimizer steps, torch.profiler's ProfilerStep#N or an NVTX range per step");
  if (s.steps < min_steps)
    throw Error(path + ": only " + std::to_string(s.steps) + " analysed step(s) (" + std::to_string(s.warmup_skipped) +
                " warm-up skipped); at least " + std::to_string(min_steps) +
                " are needed to tell a change from noise: record more steps");
  return r;
}

std::vector<double> Recording::step_ms() const {
  std::vector<double> v;
  v.reserve(analysis_.steps.size());
  for (const auto& s : analysis_.steps) v.push_back(static_cast<double>(s.end_ns - s.start_ns) / 1e6);
  return v;
}

std::vector<std::vector<double>> Recording::kernel_step_ms(const std::vector<std::string>& names) const {
  const auto& steps = analysis_.steps;
  std::vector<std::vector<double>> out(names.size(), std::vector<double>(steps.size(), 0.0));
  if (names.empty() || steps.empty() || analysis_.summary.device < 0) return out;
  store::Reader reader(db_path_);
  std::unordered_map<std::string_view, size_t> wanted;
  for (size_t i = 0; i < names.size(); ++i) wanted.emplace(names[i], i);
  std::unordered_map<int64_t, size_t> by_id;
  const auto& strings = reader.strings();
  for (size_t id = 0; id < strings.size(); ++id)
    if (auto it = wanted.find(strings[id]); it != wanted.end()) by_id.emplace(static_cast<int64_t>(id), it->second);
  if (by_id.empty()) return out;
  std::vector<int64_t> starts;
  for (const auto& s : steps) starts.push_back(s.start_ns);
  auto st = reader.query("SELECT name_id, start, \"end\" FROM kernel WHERE pid=?1 AND device=?2");
  st.bind(1, analysis_.summary.pid);
  st.bind(2, analysis_.summary.device);
  while (st.step()) {
    auto it = by_id.find(st.int64(0));
    if (it == by_id.end()) continue;
    const int64_t start = st.int64(1), end = st.int64(2);
    auto pos = std::upper_bound(starts.begin(), starts.end(), start);
    if (pos == starts.begin()) continue;
    const auto step = static_cast<size_t>(pos - starts.begin() - 1);
    if (start >= steps[step].end_ns) continue;
    out[it->second][step] += static_cast<double>(end - start) / 1e6;
  }
  return out;
}

}  // namespace gpuscope::regress
