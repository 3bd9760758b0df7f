// Loads one process of a recording into the model. The big tables stream
// through prepared statements on two threads, each with its own read-only
// connection; rows become fixed-size records, names stay string ids.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "analyzer/model.h"
#include "common/error.h"
#include "store/reader.h"

namespace gpuscope::analyzer {
namespace {

uint32_t sat32(int64_t v) {
  if (v <= 0) return 0;
  return v > int64_t{UINT32_MAX} ? UINT32_MAX : static_cast<uint32_t>(v);
}

uint32_t id32(const store::Statement& st, int col) {
  return st.is_null(col) ? kNone : static_cast<uint32_t>(st.int64(col));
}

std::string base_name(const std::string& path) {
  size_t p = path.find_last_of('/');
  return p == std::string::npos ? path : path.substr(p + 1);
}

bool table_has_rows(store::Connection& db, const char* table) {
  if (!db.has_table(table)) return false;
  return db.query_int(std::string("SELECT 1 FROM \"") + table + "\" LIMIT 1").has_value();
}

// Rows a table holds, estimated from its rowid range without scanning it.
int64_t estimate_rows(store::Connection& db, const char* table) {
  if (!db.has_table(table)) return 0;
  auto v = db.query_int(std::string("SELECT coalesce(max(rowid) - min(rowid) + 1, 0) FROM \"") + table + "\"");
  return v.value_or(0);
}

std::vector<std::pair<int64_t, int64_t>> pid_totals(store::Connection& db, const std::string& sql) {
  std::vector<std::pair<int64_t, int64_t>> out;
  auto st = db.prepare(sql);
  while (st.step()) out.emplace_back(st.int64(0), st.int64(1));
  return out;
}

int64_t pick_largest(const std::vector<std::pair<int64_t, int64_t>>& totals) {
  int64_t best = -1, best_v = -1;
  for (auto [pid, v] : totals)
    if (v > best_v) best = pid, best_v = v;
  return best;
}

int64_t choose_pid(store::Connection& db, const std::vector<int64_t>& pids, const LoadOptions& opt) {
  if (pids.size() == 1) return pids[0];
  if (opt.device) {
    auto t = pid_totals(db, "SELECT pid, sum(\"end\" - start) FROM kernel WHERE device=" + std::to_string(*opt.device) +
                                " GROUP BY pid");
    if (!t.empty()) return pick_largest(t);
  }
  auto t = pid_totals(db, "SELECT pid, value FROM collector_stat WHERE key='records_kernel' AND value > 0");
  if (t.empty()) t = pid_totals(db, "SELECT pid, sum(\"end\" - start) FROM kernel GROUP BY pid");
  if (t.empty()) t = pid_totals(db, "SELECT pid, count(*) FROM step GROUP BY pid");
  if (t.empty()) t = pid_totals(db, "SELECT pid, count(*) FROM range GROUP BY pid");
  if (t.empty()) t = pid_totals(db, "SELECT pid, count(*) FROM op GROUP BY pid");
  if (t.empty()) t = pid_totals(db, "SELECT pid, count(*) FROM api_call GROUP BY pid");
  return t.empty() ? pids.front() : pick_largest(t);
}

class Progress {
 public:
  Progress(bool on, int64_t total) : on_(on && isatty(2)), total_(std::max<int64_t>(total, 1)) {}
  void add(int64_t n) {
    int64_t now = done_.fetch_add(n, std::memory_order_relaxed) + n;
    if (!on_) return;
    auto t = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mu_);
    if (t - last_ < std::chrono::milliseconds(250)) return;
    last_ = t;
    std::fprintf(stderr, "\rgpuscope analyze: loading %3d%% (%lld rows)", static_cast<int>(std::min<int64_t>(100, 100 * now / total_)),
                 static_cast<long long>(now));
  }
  void finish() {
    if (on_ && done_.load() > 0) std::fprintf(stderr, "\r%60s\r", "");
  }

 private:
  bool on_;
  int64_t total_;
  std::atomic<int64_t> done_{0};
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_{};
};

constexpr int64_t kProgressEvery = 1 << 16;

struct Window {
  int64_t pid, lo, hi;
};

// Binds pid, lo, hi as ?1, ?2, ?3.
store::Statement windowed(store::Connection& db, const std::string& sql, const Window& w) {
  auto st = db.prepare(sql);
  st.bind(1, w.pid);
  if (st.parameter_count() >= 3) {
    st.bind(2, w.lo);
    st.bind(3, w.hi);
  }
  return st;
}

template <class T>
void reserve_for(std::vector<T>& v, store::Connection& db, const char* table) {
  v.reserve(static_cast<size_t>(std::min<int64_t>(estimate_rows(db, table), int64_t{1} << 30)));
}

template <class T>
void finish_vector(std::vector<T>& v) {
  if (v.capacity() > v.size() + v.size() / 4 + 1024) v.shrink_to_fit();
  if (!std::is_sorted(v.begin(), v.end(), [](const T& a, const T& b) { return a.start < b.start; }))
    std::sort(v.begin(), v.end(), [](const T& a, const T& b) { return a.start < b.start; });
}

void load_kernels(store::Connection& db, Model& m, const Window& w, Progress& p) {
  reserve_for(m.kernels, db, "kernel");
  auto st = windowed(db, "SELECT start, \"end\", name_id, correlation, stream, device, grid_x, grid_y, grid_z, "
                         "block_x, block_y, block_z FROM kernel WHERE pid=?1 AND \"end\">?2 AND start<?3", w);
  int64_t n = 0;
  m.kernel_config.assign(m.strings ? m.strings->size() : 0, {});
  while (st.step()) {
    KernelRec k;
    k.start = st.int64(0);
    k.dur = sat32(st.int64(1) - k.start);
    k.name = id32(st, 2);
    k.corr = static_cast<uint32_t>(st.int64(3));
    k.stream = static_cast<uint32_t>(st.int64(4));
    k.device = static_cast<uint16_t>(st.int64(5));
    int64_t gx = st.int64(6), gy = st.int64(7), gz = st.int64(8);
    k.blocks = sat32(gx * gy * gz);
    if (k.name < m.kernel_config.size() && m.kernel_config[k.name][0] == 0)
      m.kernel_config[k.name] = {sat32(gx), sat32(gy), sat32(gz), sat32(st.int64(9)), sat32(st.int64(10)),
                                 sat32(st.int64(11))};
    m.kernels.push_back(k);
    if (++n % kProgressEvery == 0) p.add(kProgressEvery);
  }
  p.add(n % kProgressEvery);
  finish_vector(m.kernels);
}

void load_copies(store::Connection& db, Model& m, const Window& w, Progress& p) {
  int64_t n = 0;
  auto st = windowed(db, "SELECT start, \"end\", correlation, stream, device, copy_kind, src_kind, dst_kind, bytes "
                         "FROM memcpy WHERE pid=?1 AND \"end\">?2 AND start<?3", w);
  while (st.step()) {
    CopyRec c;
    c.start = st.int64(0);
    c.dur = sat32(st.int64(1) - c.start);
    c.corr = static_cast<uint32_t>(st.int64(2));
    c.stream = static_cast<uint32_t>(st.int64(3));
    c.device = static_cast<uint16_t>(st.int64(4));
    c.copy_kind = static_cast<uint8_t>(st.int64(5));
    c.src_kind = static_cast<uint8_t>(st.int64(6));
    c.dst_kind = static_cast<uint8_t>(st.int64(7));
    c.bytes = st.int64(8);
    m.copies.push_back(c);
    if (++n % kProgressEvery == 0) p.add(kProgressEvery);
  }
  auto ms = windowed(db, "SELECT start, \"end\", correlation, stream, device, mem_kind, bytes "
                         "FROM memset WHERE pid=?1 AND \"end\">?2 AND start<?3", w);
  while (ms.step()) {
    CopyRec c;
    c.memset = true;
    c.start = ms.int64(0);
    c.dur = sat32(ms.int64(1) - c.start);
    c.corr = static_cast<uint32_t>(ms.int64(2));
    c.stream = static_cast<uint32_t>(ms.int64(3));
    c.device = static_cast<uint16_t>(ms.int64(4));
    c.dst_kind = static_cast<uint8_t>(ms.int64(5));
    c.bytes = ms.int64(6);
    m.copies.push_back(c);
    if (++n % kProgressEvery == 0) p.add(kProgressEvery);
  }
  p.add(n % kProgressEvery);
  finish_vector(m.copies);
}

void load_apis(store::Connection& db, Model& m, const Window& w, Progress& p) {
  reserve_for(m.apis, db, "api_call");
  // API names are few: classify each string id once.
  std::unordered_map<uint32_t, ApiClass> classes;
  auto st = windowed(db, "SELECT start, \"end\", name_id, correlation, return_code FROM api_call "
                         "WHERE pid=?1 AND \"end\">?2 AND start<?3", w);
  int64_t n = 0;
  while (st.step()) {
    ApiRec a;
    a.start = st.int64(0);
    a.dur = sat32(st.int64(1) - a.start);
    a.name = id32(st, 2);
    a.corr = static_cast<uint32_t>(st.int64(3));
    a.failed = st.int64(4) != 0;
    auto it = classes.find(a.name);
    if (it == classes.end()) it = classes.emplace(a.name, classify_api(m.str(a.name))).first;
    a.cls = it->second;
    m.apis.push_back(a);
    if (++n % kProgressEvery == 0) p.add(kProgressEvery);
  }
  p.add(n % kProgressEvery);
  finish_vector(m.apis);
}

void load_syncs(store::Connection& db, Model& m, const Window& w, Progress& p) {
  auto st = windowed(db, "SELECT start, \"end\", correlation, type FROM sync WHERE pid=?1 AND \"end\">?2 AND start<?3", w);
  while (st.step()) m.syncs.push_back({st.int64(0), st.int64(1), static_cast<uint32_t>(st.int64(2)),
                                       static_cast<uint8_t>(st.int64(3))});
  p.add(static_cast<int64_t>(m.syncs.size()));
  finish_vector(m.syncs);
}

void load_ops(store::Connection& db, Model& m, const Window& w, Progress& p) {
  reserve_for(m.ops, db, "op");
  std::unordered_map<int64_t, uint32_t> threads;
  auto st = windowed(db, "SELECT start, \"end\", tid, name_id, depth, backward, shapes_id, dtypes_id, external_id "
                         "FROM op WHERE pid=?1 AND \"end\">?2 AND start<?3", w);
  int64_t n = 0;
  while (st.step()) {
    OpRec o;
    o.start = st.int64(0);
    o.end = std::max(o.start, st.int64(1));
    o.thread = threads.emplace(st.int64(2), static_cast<uint32_t>(threads.size())).first->second;
    o.name = id32(st, 3);
    o.depth = static_cast<uint16_t>(std::clamp<int64_t>(st.int64(4), 0, 65535));
    o.backward = st.int64(5) != 0;
    o.shapes = id32(st, 6);
    o.dtypes = id32(st, 7);
    o.ext = st.is_null(8) ? -1 : st.int64(8);
    m.ops.push_back(o);
    if (++n % kProgressEvery == 0) p.add(kProgressEvery);
  }
  p.add(n % kProgressEvery);
  finish_vector(m.ops);
}

void load_ext_links(store::Connection& db, Model& m, const Window& w, Progress& p) {
  if (!db.has_table("external_correlation")) return;
  auto st = windowed(db, "SELECT correlation, external_id FROM external_correlation WHERE pid=?1", w);
  int64_t n = 0;
  while (st.step()) {
    m.ext_links.emplace_back(static_cast<uint32_t>(st.int64(0)), st.int64(1));
    if (++n % kProgressEvery == 0) p.add(kProgressEvery);
  }
  p.add(n % kProgressEvery);
}

// Memory events are not windowed: peaks before the analysed steps still matter.
void load_memory(store::Connection& db, Model& m, const Window& w, Progress& p) {
  auto st = windowed(db, "SELECT ts, device, op, source, mem_kind, bytes, total_allocated, total_reserved "
                         "FROM memory_event WHERE pid=?1", w);
  int64_t n = 0;
  while (st.step()) {
    int64_t ts = st.int64(0), source = st.int64(3), op = st.int64(2);
    auto device = static_cast<uint16_t>(st.int64(1));
    if (source == 2) {
      if (st.is_null(6) && st.is_null(7)) continue;
      m.torch_mem.push_back({ts, st.is_null(6) ? -1 : st.int64(6), st.is_null(7) ? -1 : st.int64(7), device});
    } else if (source == 1 && st.int64(4) == 3) {  // CUDA, device memory
      int64_t bytes = st.int64(5);
      m.cuda_mem.push_back({ts, op == 2 ? -bytes : bytes, device});
    }
    ++n;
  }
  p.add(n);
  auto by_ts = [](const auto& a, const auto& b) { return a.ts < b.ts; };
  std::stable_sort(m.torch_mem.begin(), m.torch_mem.end(), by_ts);
  std::stable_sort(m.cuda_mem.begin(), m.cuda_mem.end(), by_ts);
}

void link(Model& m) {
  std::vector<std::pair<uint64_t, uint32_t>> pairs;
  pairs.reserve(m.apis.size());
  for (uint32_t i = 0; i < m.apis.size(); ++i) pairs.emplace_back(m.apis[i].corr, i);
  m.api_by_corr.build(std::move(pairs));

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
  pairs.clear();
  for (uint32_t i = 0; i < n; ++i)
    if (m.ops[i].ext >= 0) pairs.emplace_back(static_cast<uint64_t>(m.ops[i].ext), i);
  IdMap op_by_ext;
  op_by_ext.build(std::move(pairs));
  pairs.clear();
  pairs.reserve(m.ext_links.size());
  for (auto [corr, ext] : m.ext_links) {
    if (ext < 0) continue;
    uint32_t op = op_by_ext.find(static_cast<uint64_t>(ext));
    if (op != kNone) pairs.emplace_back(corr, op);
  }
  m.ext_links = {};
  m.op_by_corr.build(std::move(pairs));
}

}  // namespace

void IdMap::build(std::vector<std::pair<uint64_t, uint32_t>> pairs) {
  dense_.clear();
  sparse_.clear();
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
  if (!dense_.empty()) return key < dense_.size() ? dense_[key] : kNone;
  auto it = std::lower_bound(sparse_.begin(), sparse_.end(), std::make_pair(key, uint32_t{0}));
  return it != sparse_.end() && it->first == key ? it->second : kNone;
}

Model load_header(store::Reader& reader, const LoadOptions& opt) {
  Model m;
  auto& db = reader.db();
  m.path = db.path();
  m.file_name = base_name(m.path);

  static const char* kEventTables[] = {"kernel", "memcpy", "memset", "api_call", "range", "op", "step", "sync"};
  bool any = false;
  for (const char* t : kEventTables) any = any || table_has_rows(db, t);

  std::vector<int64_t> pids;
  std::unordered_map<int64_t, std::string> status;
  {
    auto st = reader.query("SELECT pid, cupti_status FROM process ORDER BY pid");
    while (st.step()) {
      pids.push_back(st.int64(0));
      status[st.int64(0)] = std::string(st.text(1));
    }
  }
  m.processes = static_cast<int64_t>(pids.size());
  if (!any) {
    std::string why;
    for (auto& [pid, s] : status)
      if (!s.empty() && s != "ok") why = " (process " + std::to_string(pid) + " cupti_status=" + s + ")";
    throw Error(m.path + ": empty recording: no kernels, API calls, ranges or ops" + why);
  }
  if (pids.empty()) {  // imported or hand-made files may lack process rows
    for (const char* t : kEventTables) {
      if (!table_has_rows(db, t)) continue;
      auto st = reader.query(std::string("SELECT DISTINCT pid FROM \"") + t + "\"");
      while (st.step())
        if (std::find(pids.begin(), pids.end(), st.int64(0)) == pids.end()) pids.push_back(st.int64(0));
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
    auto st = reader.query("SELECT id, name, sm_count, total_memory FROM device ORDER BY id");
    while (st.step()) m.devices.push_back({st.int64(0), std::string(st.text(1)), st.int64(2), st.int64(3)});
  }
  m.strings = &reader.strings();
  {
    std::unordered_map<int64_t, uint32_t> threads;
    auto st = reader.query("SELECT tid, source, name_id, start, \"end\", depth FROM range WHERE pid=? AND \"end\" IS NOT NULL");
    st.bind(1, m.pid);
    while (st.step()) {
      RangeRec r;
      r.thread = threads.emplace(st.int64(0), static_cast<uint32_t>(threads.size())).first->second;
      r.source = static_cast<uint8_t>(st.int64(1));
      r.name = id32(st, 2);
      r.start = st.int64(3);
      r.end = std::max(r.start, st.int64(4));
      r.depth = st.is_null(5) ? -1 : static_cast<int32_t>(st.int64(5));
      m.ranges.push_back(r);
    }
    std::sort(m.ranges.begin(), m.ranges.end(), [](const RangeRec& a, const RangeRec& b) { return a.start < b.start; });
  }
  {
    auto st = reader.query("SELECT number, start, \"end\", source FROM step WHERE pid=? AND \"end\" > start");
    st.bind(1, m.pid);
    while (st.step()) m.step_rows.push_back({st.int64(0), st.int64(1), st.int64(2), st.int64(3)});
  }
  return m;
}

void load_events(store::Reader& reader, Model& m, int64_t lo, int64_t hi, bool progress) {
  m.lo = lo;
  m.hi = hi;
  auto& db = reader.db();
  int64_t total = 0;
  for (const char* t : {"kernel", "memcpy", "memset", "api_call", "op", "sync", "memory_event", "external_correlation"})
    total += estimate_rows(db, t);
  Progress prog(progress, total);
  const Window w{m.pid, lo, hi};
  using Task = std::function<void(store::Connection&)>;
  // Largest first, so the two workers finish close together.
  std::vector<Task> tasks = {
      [&](store::Connection& c) { load_kernels(c, m, w, prog); },
      [&](store::Connection& c) { load_apis(c, m, w, prog); },
      [&](store::Connection& c) { load_ext_links(c, m, w, prog); },
      [&](store::Connection& c) { load_ops(c, m, w, prog); },
      [&](store::Connection& c) { load_copies(c, m, w, prog); },
      [&](store::Connection& c) { load_syncs(c, m, w, prog); },
      [&](store::Connection& c) { load_memory(c, m, w, prog); },
  };
  std::atomic<size_t> next{0};
  std::mutex err_mu;
  std::string error;
  auto worker = [&] {
    try {
      store::Connection conn(m.path, store::Connection::Mode::kReadOnly);
      for (size_t i; (i = next.fetch_add(1)) < tasks.size();) tasks[i](conn);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(err_mu);
      if (error.empty()) error = e.what();
      next = tasks.size();
    }
  };
  unsigned hw = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < hw; ++i) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  prog.finish();
  if (!error.empty()) throw Error(m.path + ": " + error);
  link(m);
}

}  // namespace gpuscope::analyzer
