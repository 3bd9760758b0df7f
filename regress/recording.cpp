// Loading one side of a diff: a gpuscope recording, or a trace imported into
// a temporary one (formats::open_recording), analysed with every kernel and op kept.
#include <algorithm>
#include <unordered_map>

#include "trace_formats/common/error.h"
#include "trace_formats/import/open_recording.h"
#include "regress/diff.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::regress {

Recording::Recording() = default;
Recording::Recording(Recording&&) noexcept = default;
Recording& Recording::operator=(Recording&&) noexcept = default;
Recording::~Recording() = default;

const std::string& Recording::path() const { return file_->input(); }
const std::string& Recording::db_path() const { return file_->path(); }
bool Recording::imported() const { return file_->imported(); }

Recording Recording::load(const std::string& path, const analyzer::Options& options, int64_t min_steps) {
  Recording r;
  r.file_ = std::make_unique<formats::OpenedRecording>(formats::open_recording(path, options.progress));
  r.file_->read([&] {
    store::Reader reader(r.file_->path());
    analyzer::Options o = options;
    o.top = 1 << 30;  // every kernel and op: a name missing on one side must be a real absence
    r.analysis_ = analyzer::analyze(reader, o);
  });
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
  store::Reader reader(db_path());
  std::unordered_map<std::string_view, size_t> wanted;
  for (size_t i = 0; i < names.size(); ++i) wanted.emplace(names[i], i);
  std::unordered_map<int64_t, size_t> by_id;
  const auto& strings = reader.strings();
  for (size_t id = 0; id < strings.size(); ++id)
    if (auto it = wanted.find(strings[id]); it != wanted.end()) by_id.emplace(static_cast<int64_t>(id), it->second);
  if (by_id.empty()) return out;
  std::vector<int64_t> starts;
  for (const auto& s : steps) starts.push_back(s.start_ns);
  using K = store::rec::Kernel;
  store::Cursor<K> k(reader.db(), {K::kNameId, K::kStart, K::kEnd}, "WHERE pid=?1 AND device=?2");
  k.bind(1, analysis_.summary.pid);
  k.bind(2, analysis_.summary.device);
  while (k.next()) {
    auto it = by_id.find(k->name_id_or_zero());
    if (it == by_id.end()) continue;
    const int64_t start = k->start_or_zero(), end = k->end_or_zero();
    auto pos = std::upper_bound(starts.begin(), starts.end(), start);
    if (pos == starts.begin()) continue;
    const auto step = static_cast<size_t>(pos - starts.begin() - 1);
    if (start >= steps[step].end_ns) continue;
    out[it->second][step] += static_cast<double>(end - start) / 1e6;
  }
  return out;
}

}  // namespace gpuscope::regress
