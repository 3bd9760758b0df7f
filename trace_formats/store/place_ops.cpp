#include "trace_formats/store/place_ops.h"
#include "trace_formats/schema/meta_keys.h"
#include "trace_formats/store/reader.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpuscope::store {
namespace {

struct Window {
  int64_t start, end;
};

struct Call {
  int64_t name, work;  // the call's name, and what it asked of the GPU (work_key)
  int64_t start, end;
};

struct Op {
  int64_t tid, name, start, end, depth, backward, scope, shapes, dtypes;
};

// A recorded step's calls on one thread and the ops it ran there.
struct Template {
  int64_t step_start = 0, step_end = 0;
  std::vector<Call> calls;
  std::vector<Op> ops;
  uint64_t last_used = 0;  // the step that stored or used it last
};

// Templates kept at once (per process): a steady job needs one or two a thread;
// the cap bounds memory when every recorded step differs.
constexpr size_t kMaxTemplates = 64;
// A step whose calls hold a recorded step's with others around them is given
// that step's ops when the recorded calls number at least this many.
constexpr size_t kMinContainedCalls = 8;

using Threads = std::map<int64_t, std::vector<Call>>;  // tid -> its matching calls in a step, in start order

uint64_t signature(const std::vector<Call>& calls) {
  uint64_t h = 1469598103934665603ull ^ calls.size();
  for (const Call& c : calls) {
    h = (h ^ static_cast<uint64_t>(c.name)) * 1099511628211ull;
    h = (h ^ static_cast<uint64_t>(c.work)) * 1099511628211ull;
  }
  return h;
}

bool same_call(const Call& x, const Call& y) { return x.name == y.name && x.work == y.work; }

bool same_names(const std::vector<Call>& a, const std::vector<Call>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_call);
}

// Maps a time of the recorded step onto the new one: piecewise linear
// between matching points (the step's bounds and each call's entry and
// return), so an op between two calls there lands between the same calls here.
class TimeMap {
 public:
  // `to` points at the new step's calls that match from.calls one for one;
  // the recorded step's bounds map onto `lo` and `hi`.
  TimeMap(const Template& from, int64_t lo, int64_t hi, const Call* to) {
    points_.reserve(2 * from.calls.size() + 2);
    points_.push_back({from.step_start, lo});
    for (size_t i = 0; i < from.calls.size(); ++i) {
      points_.push_back({from.calls[i].start, to[i].start});
      points_.push_back({from.calls[i].end, to[i].end});
    }
    points_.push_back({from.step_end, hi});
    // Driver calls sit inside the runtime calls that made them: order by the
    // recorded time, then keep the new times from going back.
    std::stable_sort(points_.begin(), points_.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
    for (size_t i = 1; i < points_.size(); ++i) points_[i][1] = std::max(points_[i][1], points_[i - 1][1]);
  }

  int64_t operator()(int64_t t) const {
    auto it = std::upper_bound(points_.begin(), points_.end(), t, [](int64_t v, const auto& p) { return v < p[0]; });
    if (it == points_.begin()) return points_.front()[1] - (points_.front()[0] - t);
    if (it == points_.end()) return points_.back()[1] + (t - points_.back()[0]);
    const auto& a = *(it - 1);
    const auto& b = *it;
    if (b[0] == a[0]) return a[1];
    return a[1] + static_cast<int64_t>(static_cast<double>(b[1] - a[1]) * static_cast<double>(t - a[0]) /
                                       static_cast<double>(b[0] - a[0]));
  }

 private:
  std::vector<std::array<int64_t, 2>> points_;  // (recorded step's time, new step's time)
};

class Placer {
 public:
  Placer(Connection& db, const PlaceProgress& progress) : db_(db), progress_(progress) {
    total_calls_ = static_cast<uint64_t>(db.query_int("SELECT count(*) FROM api_call").value_or(0));
    auto names = db.prepare(
        "SELECT s.id, s.value FROM string s WHERE s.id IN (SELECT DISTINCT name_id FROM api_call)");
    while (names.step()) matching_[names.int64(0)] = is_step_matching_call(names.text(1));
    // What each call asked of the GPU, as one number: the kernels' names and
    // grid sizes, the copies' and memsets' bytes. Equal calls with other
    // shapes almost always launch other grids or move other byte counts, so
    // such a step is not given ops whose shapes would be wrong.
    db.exec("DROP TABLE IF EXISTS temp.call_work");
    db.exec("CREATE TEMP TABLE call_work AS SELECT pid, correlation, sum(work) AS work FROM ("
            "SELECT pid, correlation, name_id * 1000003 + grid_x * 7919 + grid_y * 104729 + grid_z AS work FROM kernel "
            "WHERE correlation != 0 UNION ALL SELECT pid, correlation, bytes FROM memcpy WHERE correlation != 0 "
            "UNION ALL SELECT pid, correlation, bytes FROM memset WHERE correlation != 0) GROUP BY pid, correlation");
    db.exec("CREATE INDEX temp.call_work_key ON call_work(pid, correlation)");
    insert_ = db.prepare(
        "INSERT INTO op(pid, tid, name_id, start, \"end\", depth, seq_nr, backward, scope, shapes_id, dtypes_id, "
        "external_id) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)");
  }

  void process(int64_t pid) {
    pid_ = pid;
    load_steps();
    if (windows_.empty()) return;
    templates_.clear();
    // Ops and calls, both in start order, walked step by step: only the step
    // at hand's ops and the templates are held, however long the recording.
    // The ops are sorted before the first row comes back, so the rows added
    // meanwhile are not read; placed ones are left out besides.
    auto ops = db_.prepare(
        "SELECT tid, name_id, start, \"end\", depth, backward, scope, shapes_id, dtypes_id FROM op "
        "WHERE pid = ? AND \"end\" IS NOT NULL AND (external_id IS NULL OR external_id < " +
        std::to_string(kPlacedOpIdBase) + ") ORDER BY start");
    ops.bind(1, pid);
    ops_ = &ops;
    ops_more_ = ops_->step();
    auto calls = db_.prepare(
        "SELECT a.tid, a.name_id, a.start, a.\"end\", coalesce(w.work, 0) FROM api_call a "
        "LEFT JOIN temp.call_work w ON w.pid = a.pid AND w.correlation = a.correlation "
        "WHERE a.pid = ? ORDER BY a.start");
    calls.bind(1, pid);
    size_t w = 0;
    Threads threads;
    while (calls.step()) {
      if ((++done_ & 0xffff) == 0 && progress_) progress_(done_, total_calls_);
      const int64_t start = calls.int64(2);
      while (w < windows_.size() && start >= windows_[w].end) {
        finish_step(windows_[w], threads);
        threads.clear();
        ++w;
      }
      if (w == windows_.size()) break;
      if (start < windows_[w].start || calls.is_null(3)) continue;
      auto m = matching_.find(calls.int64(1));
      if (m == matching_.end() || !m->second) continue;
      threads[calls.int64(0)].push_back({calls.int64(1), calls.int64(4), start, calls.int64(3)});
    }
    for (; w < windows_.size(); ++w) {
      finish_step(windows_[w], threads);
      threads.clear();
    }
    ops_ = nullptr;
  }

  PlacedOps result() {
    db_.exec("DROP TABLE IF EXISTS temp.call_work");
    return out_;
  }

 private:
  void load_steps() {
    windows_.clear();
    auto st = db_.prepare("SELECT start, \"end\" FROM step WHERE pid = ? AND \"end\" IS NOT NULL ORDER BY start");
    st.bind(1, pid_);
    while (st.step()) {
      Window w{st.int64(0), st.int64(1)};
      if (!windows_.empty()) w.start = std::max(w.start, windows_.back().end);  // overlapping steps: split the overlap
      if (w.end > w.start) windows_.push_back(w);
    }
  }

  // The ops that start in `w`, from the ops cursor (which never goes back).
  void step_ops(const Window& w) {
    step_ops_.clear();
    for (; ops_more_; ops_more_ = ops_->step()) {
      const int64_t start = ops_->int64(2);
      if (start >= w.end) break;
      if (start < w.start) continue;  // between steps: no step's op
      auto nullable = [&](int col) { return ops_->is_null(col) ? kNull : ops_->int64(col); };
      step_ops_.push_back({ops_->int64(0), ops_->int64(1), start, ops_->int64(3), ops_->int64(4), ops_->int64(5),
                           ops_->int64(6), nullable(7), nullable(8)});
    }
  }

  void finish_step(const Window& w, Threads& threads) {
    step_ops(w);
    ++step_no_;
    if (threads.empty()) return;  // untraced (sampling, control stretch): nothing to give ops to
    if (!step_ops_.empty()) {  // a recorded step: what the steps after it may match
      for (auto& [tid, calls] : threads) {
        Template& t = templates_[{tid, signature(calls)}];
        t.step_start = w.start;
        t.step_end = w.end;
        t.last_used = step_no_;
        t.ops.clear();
        for (const Op& o : step_ops_)
          if (o.tid == tid) t.ops.push_back(o);
        t.calls = std::move(calls);
      }
      while (templates_.size() > kMaxTemplates)
        templates_.erase(std::min_element(templates_.begin(), templates_.end(), [](const auto& a, const auto& b) {
          return a.second.last_used < b.second.last_used;
        }));
      return;
    }
    bool all = true, extra = false;
    for (const auto& [tid, calls] : threads) {
      auto it = templates_.find({tid, signature(calls)});
      if (it != templates_.end() && same_names(it->second.calls, calls)) {
        it->second.last_used = step_no_;
        place(it->second, w.start, w.end, tid, calls.data());
        continue;
      }
      // A recorded step's calls with others before or after them that ask
      // for work it never does (a probe between blocks of steps, a logging
      // copy every N steps): the ops go between the matching calls; the
      // extra calls' kernels keep none.
      size_t at = 0;
      Template* inside = contained_template(tid, calls, at);
      if (!inside) {
        all = false;
        continue;
      }
      inside->last_used = step_no_;
      const size_t n = inside->calls.size();
      // Short of the next call: an op ending where a call starts holds it (finalize.h).
      place(*inside, at > 0 ? calls[at - 1].end : w.start, at + n < calls.size() ? calls[at + n].start - 1 : w.end, tid,
            calls.data() + at);
      extra = true;
    }
    ++(all ? out_.steps_placed : out_.steps_unplaced);
    if (all && extra) ++out_.steps_with_extra_calls;
  }

  // The thread's largest template (the latest of equals) whose calls run, in
  // order and with nothing between, inside `calls` with calls before or after
  // them; `at` is where. Templates of fewer than kMinContainedCalls calls are
  // not looked for: a short run matches by chance.
  Template* contained_template(int64_t tid, const std::vector<Call>& calls, size_t& at) {
    Template* best = nullptr;
    for (auto it = templates_.lower_bound({tid, 0}); it != templates_.end() && it->first.first == tid; ++it) {
      Template& t = it->second;
      const size_t n = t.calls.size();
      if (n < kMinContainedCalls || n >= calls.size()) continue;
      if (best && (n < best->calls.size() || (n == best->calls.size() && t.last_used < best->last_used))) continue;
      for (size_t k = 0; k + n <= calls.size(); ++k) {
        if (!std::equal(t.calls.begin(), t.calls.end(), calls.begin() + static_cast<std::ptrdiff_t>(k), same_call))
          continue;
        if (foreign_around(t, calls, k)) best = &t, at = k;
        break;
      }
    }
    return best;
  }

  // Whether the calls around calls[k, k + n) ask the GPU for work the
  // template never does (another kernel or grid, other bytes): a probe or a
  // logging copy. A step of the job's own kind that merely starts like a
  // recorded one (the first step, whose backward creates the gradients) repeats
  // some of its work, and is left unplaced.
  static bool foreign_around(const Template& t, const std::vector<Call>& calls, size_t k) {
    std::set<std::pair<int64_t, int64_t>> own;  // (name, work)
    for (const Call& c : t.calls) own.emplace(c.name, c.work);
    for (size_t i = 0; i < calls.size(); ++i)
      if ((i < k || i >= k + t.calls.size()) && own.contains({calls[i].name, calls[i].work})) return false;
    return true;
  }

  void place(const Template& from, int64_t lo, int64_t hi, int64_t tid, const Call* calls) {
    const TimeMap map(from, lo, hi, calls);
    for (const Op& o : from.ops) {
      const int64_t start = map(o.start);
      insert_.bind(1, pid_);
      insert_.bind(2, tid);
      insert_.bind(3, o.name);
      insert_.bind(4, start);
      insert_.bind(5, std::max(start, map(o.end)));
      insert_.bind(6, o.depth);
      insert_.bind(7, o.backward);
      insert_.bind(8, o.scope);
      insert_.bind(9, o.shapes);
      insert_.bind(10, o.dtypes);
      insert_.bind(11, kPlacedOpIdBase + out_.ops);
      insert_.run();
      ++out_.ops;
    }
  }

  Connection& db_;
  const PlaceProgress& progress_;
  Statement insert_;
  std::unordered_map<int64_t, bool> matching_;  // api_call name_id -> takes part in matching
  uint64_t total_calls_ = 0, done_ = 0;
  int64_t pid_ = 0;
  std::vector<Window> windows_;
  Statement* ops_ = nullptr;  // the process's ops in start order, while process() runs
  bool ops_more_ = false;
  std::vector<Op> step_ops_;  // the step at hand's
  uint64_t step_no_ = 0;
  std::map<std::pair<int64_t, uint64_t>, Template> templates_;  // (tid, signature): the latest recorded step
  PlacedOps out_;
};

}  // namespace

bool is_step_matching_call(std::string_view name) {
  for (std::string_view part : {"Launch", "Memcpy", "Memset", "StreamWaitEvent"})
    if (name.find(part) != std::string_view::npos) return true;
  return false;
}

bool ops_in_some_steps(Connection& db) {
  return meta_value(db, meta_key::kTorchOpSteps).value_or("0") != "0";
}

PlacedOps place_ops_by_position(Connection& db, const PlaceProgress& progress) {
  if (!ops_in_some_steps(db) || !db.query_int("SELECT 1 FROM step LIMIT 1")) return {};
  Placer placer(db, progress);
  auto pids = db.prepare("SELECT DISTINCT pid FROM step ORDER BY pid");
  std::vector<int64_t> list;
  while (pids.step()) list.push_back(pids.int64(0));
  for (int64_t pid : list) placer.process(pid);
  const PlacedOps out = placer.result();
  if (out.steps_placed || out.steps_unplaced) {
    auto meta = db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
    for (const auto& [key, value] : {std::pair{meta_key::kOpsPlaced, out.ops}, std::pair{meta_key::kOpsPlacedSteps, out.steps_placed},
                                     std::pair{meta_key::kOpsUnplacedSteps, out.steps_unplaced},
                                     std::pair{meta_key::kOpsPlacedStepsWithExtraCalls, out.steps_with_extra_calls}}) {
      const std::string text = std::to_string(value);
      meta.bind(1, key);
      meta.bind(2, std::string_view(text));
      meta.run();
    }
  }
  return out;
}

}  // namespace gpuscope::store
