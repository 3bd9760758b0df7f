// Loads one process of a recording into the model. The big tables stream
// through prepared statements on two threads, each with its own read-only
// connection; rows become fixed-size records, names stay string ids.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "analyzer/job_end.h"
#include "analyzer/model.h"
#include "analyzer/model_scan.h"
#include "analyzer/parallel.h"
#include "analyzer/timing.h"
#include "trace_formats/common/error.h"
#include "trace_formats/schema/enums.h"
#include "trace_formats/store/place_ops.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/job_end.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/rows.h"
#include "trace_formats/store/stretches.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::analyzer {
namespace {

// Cursors read NULL as store::kNull; the model takes a NULL time, number or
// size as 0 (the records' *_or_zero(), as SQLite's own integer read does) and
// a NULL string id as none.
uint32_t id32(int64_t v) { return v == store::kNull ? kNone : static_cast<uint32_t>(v); }

std::string base_name(const std::string& path) {
  size_t p = path.find_last_of('/');
  return p == std::string::npos ? path : path.substr(p + 1);
}

bool table_has_rows(store::Connection& db, const char* table) {
  if (!db.has_table(table)) return false;
  return db.query_int(std::string("SELECT 1 FROM \"") + table + "\" LIMIT 1").has_value();
}

// (pid, total) for each row of a `SELECT pid, ... AS total` query.
std::vector<std::pair<int64_t, int64_t>> pid_totals(store::Connection& db, const std::string& sql) {
  std::vector<std::pair<int64_t, int64_t>> out;
  auto st = db.prepare(sql);
  const int pid = st.column("pid"), total = st.column("total");
  while (st.step()) out.emplace_back(st.int64(pid), st.int64(total));
  return out;
}

int64_t choose_pid(store::Connection& db, const std::vector<int64_t>& pids, const LoadOptions& opt) {
  if (pids.size() == 1) return pids[0];
  return choose_default_pid(db, pids, opt.device).pid;
}

}  // namespace

PidChoice choose_default_pid(store::Connection& db, const std::vector<int64_t>& pids, std::optional<int64_t> device) {
  std::vector<std::string> tiers = {
      "SELECT pid, value AS total FROM collector_stat WHERE key='records_kernel' AND value > 0",
      "SELECT pid, sum(\"end\" - start) AS total FROM kernel GROUP BY pid",
      "SELECT pid, count(*) AS total FROM step GROUP BY pid",
      "SELECT pid, count(*) AS total FROM range GROUP BY pid",
      "SELECT pid, count(*) AS total FROM op GROUP BY pid",
      "SELECT pid, count(*) AS total FROM api_call GROUP BY pid",
  };
  if (device)
    tiers.insert(tiers.begin(), "SELECT pid, sum(\"end\" - start) AS total FROM kernel WHERE device=" +
                                    std::to_string(*device) + " GROUP BY pid");
  const int first_tier = device ? 0 : 1;
  for (size_t i = 0; i < tiers.size(); ++i) {
    const auto t = pid_totals(db, tiers[i]);
    if (t.empty()) continue;
    PidChoice c;
    c.tier = first_tier + static_cast<int>(i);
    c.value = -1;
    for (size_t row = 0; row < t.size(); ++row)
      if (t[row].second > c.value) c.pid = t[row].first, c.value = t[row].second, c.row = static_cast<int64_t>(row);
    return c;
  }
  PidChoice none;
  none.pid = pids.empty() ? 0 : pids.front();
  return none;
}

void trim_events_after(Model& m, int64_t end) {
  auto cut = [end](auto& v) {
    auto it = std::lower_bound(v.begin(), v.end(), end, [](const auto& e, int64_t t) { return e.start < t; });
    v.erase(it, v.end());
  };
  cut(m.kernels);
  cut(m.copies);
  cut(m.apis);
  cut(m.ops);
  cut(m.syncs);
  m.hi = std::min(m.hi, end);
}

void trim_events_before(Model& m, int64_t begin) {
  auto cut = [begin](auto& v) {
    v.erase(std::remove_if(v.begin(), v.end(), [begin](const auto& e) { return e.end() <= begin; }), v.end());
  };
  cut(m.kernels);
  cut(m.copies);
  cut(m.apis);
  m.ops.erase(std::remove_if(m.ops.begin(), m.ops.end(), [begin](const OpRec& o) { return o.end <= begin; }), m.ops.end());
  m.syncs.erase(std::remove_if(m.syncs.begin(), m.syncs.end(), [begin](const SyncRec& x) { return x.end <= begin; }),
                m.syncs.end());
  m.lo = std::max(m.lo, begin);
}

IdMap apis_by_correlation(const Model& m) {
  IdMap map;
  map.build_fn(m.apis.size(), [&](size_t i) {
    return std::pair<uint64_t, uint32_t>{m.apis[i].corr, static_cast<uint32_t>(i)};
  });
  return map;
}

void link_model(Model& m) {
  m.api_by_corr = apis_by_correlation(m);

  // Ops: parents and self time from nesting on each thread (containment, not the
  // depth column, so a lost record cannot shift a whole subtree).
  const size_t n = m.ops.size();
  m.op_parent.assign(n, kNone);
  m.op_self.assign(n, 0);
  std::vector<std::vector<uint32_t>> stacks;
  for (uint32_t i = 0; i < n; ++i) {
    const OpRec& o = m.ops[i];
    m.op_self[i] = o.end - o.start;
    if (o.thread >= stacks.size()) stacks.resize(o.thread + 1);
    auto& stack = stacks[o.thread];
    while (!stack.empty() && m.ops[stack.back()].end <= o.start) stack.pop_back();
    if (!stack.empty() && o.end <= m.ops[stack.back()].end) {
      m.op_parent[i] = stack.back();
      m.op_self[stack.back()] -= o.end - o.start;
    } else {
      stack.clear();  // overlapping without nesting: start a new tree
    }
    stack.push_back(i);
  }

  if (m.ext_links.empty() || m.ops.empty()) {
    m.ext_links = {};
    return;
  }
  IdMap op_by_ext;
  op_by_ext.build_fn(n, [&](size_t i) {
    const int64_t ext = m.ops[i].ext;
    return std::pair<uint64_t, uint32_t>{ext >= 0 ? static_cast<uint64_t>(ext) : 0, ext >= 0 ? static_cast<uint32_t>(i) : kNone};
  });
  m.op_by_corr.build_fn(m.ext_links.size(), [&](size_t i) {
    const auto [corr, ext] = m.ext_links[i];
    return std::pair<uint64_t, uint32_t>{corr, ext >= 0 ? op_by_ext.find(static_cast<uint64_t>(ext)) : kNone};
  });
  m.ext_links = {};
}

namespace {

// True when the recording holds one process, so scans need no pid filter.
// (Writers add a process row for every process that wrote anything.)
bool single_process(store::Connection& db, int64_t pid) {
  auto st = db.prepare("SELECT count(*) AS processes, min(pid) AS pid FROM process");
  return st.step() && st.int64("processes") == 1 && st.int64("pid") == pid;
}

}  // namespace

void IdMap::build(std::vector<std::pair<uint64_t, uint32_t>> pairs) {
  dense_.clear();
  sparse_.clear();
  std::erase_if(pairs, [](const auto& p) { return p.first == 0; });
  if (pairs.empty()) return;
  uint64_t max_key = 0;
  for (auto& p : pairs) max_key = std::max(max_key, p.first);
  if (max_key <= 4 * pairs.size() + 65536) {
    dense_.assign(max_key + 1, kNone);
    for (auto& [k, v] : pairs) dense_[k] = v;
  } else {
    std::sort(pairs.begin(), pairs.end());
    sparse_ = std::move(pairs);
  }
}

uint32_t IdMap::find(uint64_t key) const {
  if (key == 0) return kNone;
  if (!dense_.empty()) return key < dense_.size() ? dense_[key] : kNone;
  auto it = std::lower_bound(sparse_.begin(), sparse_.end(), std::make_pair(key, uint32_t{0}));
  return it != sparse_.end() && it->first == key ? it->second : kNone;
}

Model load_header(store::Reader& reader, const LoadOptions& opt) {
  Model m;
  auto& db = reader.db();
  m.path = db.path();
  m.file_name = base_name(m.path);
  m.imported = reader.meta(meta_key::kSource) == "torch.profiler import";
  m.capture = !reader.meta(meta_key::kCaptureTrigger).empty();
  m.recording_stopped = reader.meta(meta_key::kRecordingStopped);
  m.job = store::read_job_end(reader);
  if (std::string steps = reader.meta(meta_key::kTorchOpSteps); !steps.empty() && steps != "0") {
    m.op_steps = steps;
    m.ops_placed_steps = std::atoll(reader.meta(meta_key::kOpsPlacedSteps).c_str());
    m.ops_unplaced_steps = std::atoll(reader.meta(meta_key::kOpsUnplacedSteps).c_str());
    m.ops_placed_steps_with_extra_calls = std::atoll(reader.meta(meta_key::kOpsPlacedStepsWithExtraCalls).c_str());
  }

  static const char* kEventTables[] = {"kernel", "memcpy", "memset", "api_call", "range", "op", "step", "sync"};
  bool any = false;
  for (const char* t : kEventTables) any = any || table_has_rows(db, t);

  std::vector<int64_t> pids;
  std::unordered_map<int64_t, std::string> status;
  {
    using P = store::rec::Process;
    store::Cursor<P> p(db, {P::kPid, P::kCuptiStatus}, "ORDER BY pid");
    while (p.next()) {
      pids.push_back(p->pid);
      status[p->pid] = std::string(p->cupti_status);
    }
  }
  m.processes = static_cast<int64_t>(pids.size());
  if (!any) {
    std::string why;
    for (auto& [pid, s] : status)
      if (!s.empty() && s != "ok") why = " (process " + std::to_string(pid) + " cupti_status=" + s + ")";
    throw Error(m.path + ": " + unclean_job_prefix(m.job) + "empty recording: no kernels, API calls, ranges or ops" +
                why);
  }
  if (pids.empty()) {  // imported or hand-made files may lack process rows
    for (const char* t : kEventTables) {
      if (!table_has_rows(db, t)) continue;
      auto st = reader.query(std::string("SELECT DISTINCT pid FROM \"") + t + "\"");
      const int pid = st.column("pid");
      while (st.step())
        if (std::find(pids.begin(), pids.end(), st.int64(pid)) == pids.end()) pids.push_back(st.int64(pid));
    }
    std::sort(pids.begin(), pids.end());
  }
  if (opt.pid) {
    bool known = std::find(pids.begin(), pids.end(), *opt.pid) != pids.end();
    if (!known) {
      std::string list;
      for (int64_t p : pids) list += (list.empty() ? "" : ", ") + std::to_string(p);
      throw Error(m.path + ": no process " + std::to_string(*opt.pid) + " in this recording (processes: " + list + ")");
    }
    m.pid = *opt.pid;
  } else {
    m.pid = choose_pid(db, pids, opt);
  }
  m.cupti_status = status.count(m.pid) ? status[m.pid] : "";

  {
    using D = store::rec::Device;
    store::Cursor<D> d(db, {D::kId, D::kName, D::kSmCount, D::kTotalMemory}, "ORDER BY id");
    while (d.next())
      m.devices.push_back({d->id, std::string(d->name), d->sm_count_or_zero(), d->total_memory_or_zero()});
  }
  m.strings = &reader.strings();
  {
    std::unordered_map<int64_t, uint32_t> threads;
    using R = store::rec::Range;
    store::Cursor<R> range(db, {R::kTid, R::kSource, R::kNameId, R::kStart, R::kEnd, R::kDepth},
                           "WHERE pid=?1 AND \"end\" IS NOT NULL");
    range.bind(1, m.pid);
    while (range.next()) {
      RangeRec r;
      r.thread = threads.emplace(range->tid_or_zero(), static_cast<uint32_t>(threads.size())).first->second;
      r.source = static_cast<uint8_t>(range->source);  // NULL (kNull) narrows to 0
      r.name = id32(range->name_id);
      r.start = range->start_or_zero();
      r.end = range->end;
      if (!sane_times(r.start, r.end)) continue;
      r.depth = range->null(R::kDepth) ? -1 : static_cast<int32_t>(range->depth);
      if (r.source == schema::range_source::sampling_window)
        m.sampling_windows.emplace_back(r.start, r.end);
      else if (r.source == schema::range_source::untraced_drained)
        m.untraced_spans.emplace_back(r.start, r.end);
      else if (r.source == schema::range_source::tracer_overhead)
        m.tracer_overhead.push_back(r);
      else
        m.ranges.push_back(r);
    }
    std::sort(m.ranges.begin(), m.ranges.end(), [](const RangeRec& a, const RangeRec& b) { return a.start < b.start; });
    std::sort(m.tracer_overhead.begin(), m.tracer_overhead.end(),
              [](const RangeRec& a, const RangeRec& b) { return a.start < b.start; });
    // A job killed inside a traced stretch never wrote the range that closes it.
    if (const auto open = store::open_traced_stretch(reader.db(), m.pid)) {
      m.sampling_windows.push_back(*open);
      m.stretch_closed_by_reader = true;
    }
    std::sort(m.sampling_windows.begin(), m.sampling_windows.end());
    std::sort(m.untraced_spans.begin(), m.untraced_spans.end());
  }
  {
    // When each torch.compile graph first ran, over the whole recording (a
    // window may start after it): a later run is cached code, not a recompile.
    // Only jobs that use torch.compile pay for the scan of the op table.
    // Recorded ops only: ops placed by position (GPUSCOPE_TORCH_OP_STEPS) are
    // copies with interpolated times, and a graph whose placed copy ran before
    // its first recorded run was compiled in a step whose ops were not
    // recorded: when is unknown, so it has no first run here.
    std::string ids;
    for (size_t i = 0; i < m.strings->size(); ++i) {
      const std::string& name = (*m.strings)[i];
      if (name.starts_with("Torch-Compiled Region: ")) ids += (ids.empty() ? "" : ",") + std::to_string(i);
      m.torch_compile = m.torch_compile || name == "TorchDynamo Cache Lookup";
    }
    m.torch_compile = m.torch_compile || !ids.empty();
    if (!ids.empty()) {
      auto st = reader.query(
          "SELECT name_id, min(start) AS first_run, "
          "min(CASE WHEN external_id IS NULL OR external_id < ? THEN start END) AS first_recorded_run FROM op "
          "WHERE pid=? AND name_id IN (" + ids + ") GROUP BY name_id");
      st.bind(1, store::kPlacedOpIdBase);
      st.bind(2, m.pid);
      while (st.step())
        if (!st.is_null("first_recorded_run") && st.int64("first_recorded_run") == st.int64("first_run"))
          m.compiled_region_first_run.emplace(static_cast<uint32_t>(st.int64("name_id")), st.int64("first_run"));
    }
  }
  {
    using S = store::rec::Step;
    store::Cursor<S> step(db, {S::kNumber, S::kStart, S::kEnd, S::kSource}, "WHERE pid=?1 AND \"end\" > start");
    step.bind(1, m.pid);
    while (step.next())
      if (sane_times(step->start, step->end))
        m.step_rows.push_back({step->number_or_zero(), step->start, step->end, step->source_or_zero()});
  }
  return m;
}

namespace {

template <class T>
void sort_by_start(std::vector<T>& v) {
  auto by_start = [](const T& a, const T& b) { return a.start < b.start; };
  if (!std::is_sorted(v.begin(), v.end(), by_start)) std::sort(v.begin(), v.end(), by_start);
}

// Sizes `out` for every chunk's rowid range and hands each chunk its slice.
// `max_rows` bounds what a rowid range may claim: SQLite needs well over 16 bytes
// a row, so a range larger than the file allows has gaps in its rowids.
template <class T>
std::vector<scan::Slice<T>> slices(std::vector<T>& out, const std::vector<scan::Chunk>& chunks, int64_t max_rows) {
  auto cap_of = [&](const scan::Chunk& c) {
    // hi - lo cannot overflow: both are real rowids of the table.
    return static_cast<size_t>(std::clamp<int64_t>(c.hi - c.lo + 1, 0, max_rows));
  };
  size_t total = 0;
  for (const auto& c : chunks) total += cap_of(c);
  out.assign(total, T{});
  std::vector<scan::Slice<T>> s(chunks.size());
  size_t offset = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    s[i].data = out.data() + offset;
    s[i].cap = cap_of(chunks[i]);
    offset += s[i].cap;
  }
  return s;
}

// Closes the holes left by rows outside the window, in rowid order.
template <class T>
void compact(std::vector<T>& out, std::vector<scan::Slice<T>>& s) {
  size_t n = 0, extra = 0;
  for (const auto& slice : s) {
    // Moving left within one buffer, so std::copy (front to back) is safe.
    if (out.data() + n != slice.data) std::copy(slice.data, slice.data + slice.n, out.data() + n);
    n += slice.n;
    extra += slice.overflow.size();
  }
  out.resize(n);
  if (extra > 0) {  // rare: rowids with gaps; rebuild in rowid order
    std::vector<T> all;
    all.reserve(n + extra);
    size_t at = 0;
    for (auto& slice : s) {
      all.insert(all.end(), out.begin() + static_cast<long>(at), out.begin() + static_cast<long>(at + slice.n));
      all.insert(all.end(), slice.overflow.begin(), slice.overflow.end());
      at += slice.n;
      slice.overflow = {};
    }
    out = std::move(all);
  }
  if (out.capacity() > out.size() + out.size() / 4 + 4096) out.shrink_to_fit();
}

// Runs tasks on up to two threads, each with its own read-only connection.
void run_parallel(const std::string& path, const std::vector<std::function<void(store::Connection&)>>& tasks,
                  const std::vector<std::string>& names) {
  std::atomic<size_t> next{0};
  std::mutex err_mu;
  std::string error;
  auto worker = [&] {
    try {
      store::Connection conn(path, store::Connection::Mode::kReadOnly);
      for (size_t i; (i = next.fetch_add(1)) < tasks.size();) {
        PhaseTimer t;
        tasks[i](conn);
        t.mark(("    " + names[i]).c_str());
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(err_mu);
      if (error.empty()) error = e.what();
      next = tasks.size();
    }
  };
  const unsigned hw = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < hw; ++i) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (!error.empty()) throw Error(path + ": " + error);
}

}  // namespace

void load_events(store::Reader& reader, Model& m, int64_t lo, int64_t hi, bool progress) {
  m.lo = lo;
  m.hi = hi;
  auto& db = reader.db();
  int64_t total = 0;
  for (const char* t : {"kernel", "memcpy", "memset", "api_call", "op", "sync", "memory_event", "external_correlation"})
    total += scan::estimate_rows(db, t);
  scan::Progress prog(progress, total);
  const scan::Window w{m.pid, lo, hi, single_process(db, m.pid)};
  PhaseTimer timer;

  // The big tables load in two rowid halves each, so both threads stay busy.
  constexpr int kParts = 2;
  auto ck = scan::split(db, "kernel", kParts), ca = scan::split(db, "api_call", kParts), co = scan::split(db, "op", kParts),
       ce = scan::split(db, "external_correlation", kParts);
  const int64_t max_rows = std::max<int64_t>(
      1024, db.query_int("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").value_or(0) / 16);
  auto kernels = slices(m.kernels, ck, max_rows);
  auto apis = slices(m.apis, ca, max_rows);
  auto ops = slices(m.ops, co, max_rows);
  auto links = slices(m.ext_links, ce, max_rows);
  std::vector<scan::KernelConfigs> configs(ck.size());
  std::vector<std::function<void(store::Connection&)>> tasks;
  std::vector<std::string> names;
  auto add = [&](std::string name, std::function<void(store::Connection&)> fn) {
    names.push_back(std::move(name));
    tasks.push_back(std::move(fn));
  };
  for (size_t i = 0; i < co.size(); ++i) add("ops " + std::to_string(i), [&, i](store::Connection& c) { scan::ops(c, w, co[i], ops[i], prog); });
  for (size_t i = 0; i < ca.size(); ++i) add("api calls " + std::to_string(i), [&, i](store::Connection& c) { scan::apis(c, m, w, ca[i], apis[i], prog); });
  for (size_t i = 0; i < ck.size(); ++i)
    add("kernels " + std::to_string(i), [&, i](store::Connection& c) { scan::kernels(c, w, ck[i], kernels[i], configs[i], prog); });
  for (size_t i = 0; i < ce.size(); ++i)
    add("external correlation " + std::to_string(i), [&, i](store::Connection& c) { scan::ext_links(c, w, ce[i], links[i], prog); });
  add("memory events", [&](store::Connection& c) { scan::memory(c, w, m, prog); });
  add("copies", [&](store::Connection& c) { scan::copies(c, w, m.copies, prog); });
  add("syncs", [&](store::Connection& c) { scan::syncs(c, w, m.syncs, prog); });
  run_parallel(m.path, tasks, names);
  prog.finish();
  timer.mark("  scan tables");

  compact(m.kernels, kernels);
  m.kernel_config.assign(m.strings ? m.strings->size() : 0, {});
  for (auto it = configs.rbegin(); it != configs.rend(); ++it)  // the earliest chunk wins
    for (const auto& [name, g] : *it)
      if (name < m.kernel_config.size()) m.kernel_config[name] = g;
  compact(m.apis, apis);
  compact(m.ops, ops);
  compact(m.ext_links, links);
  // Op thread ids -> small indices.
  std::unordered_map<uint32_t, uint32_t> threads;
  uint32_t last_tid = UINT32_MAX, last_index = 0;
  for (auto& o : m.ops) {
    if (o.thread != last_tid) {
      last_tid = o.thread;
      last_index = threads.emplace(o.thread, static_cast<uint32_t>(threads.size())).first->second;
    }
    o.thread = last_index;
  }
  run_tasks({
      [&] { sort_by_start(m.kernels); },
      [&] {
        // Parents before the children that start with them (rows arrive in end order).
        auto outer_first = [](const OpRec& a, const OpRec& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; };
        if (!std::is_sorted(m.ops.begin(), m.ops.end(), outer_first)) std::sort(m.ops.begin(), m.ops.end(), outer_first);
      },
      [&] { sort_by_start(m.apis); },
      [&] {
        sort_by_start(m.copies);
        sort_by_start(m.syncs);
      },
  });
  timer.mark("  merge and sort");
}

}  // namespace gpuscope::analyzer
