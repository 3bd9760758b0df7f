// Column lists are kept to what the analysis uses: SQLite spends most of a scan
// decoding columns, so each one costs ~20 ns a row. For the same reason the
// time window is applied here on columns read anyway instead of in a WHERE.
#include "analyzer/model_scan.h"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "schema/enums.h"

namespace gpuscope::analyzer::scan {
namespace {

constexpr int64_t kProgressEvery = 1 << 16;

uint32_t sat32(int64_t v) {
  if (v <= 0) return 0;
  return v > int64_t{UINT32_MAX} ? UINT32_MAX : static_cast<uint32_t>(v);
}

uint32_t id32(const store::Statement& st, int col) {
  return st.is_null(col) ? kNone : static_cast<uint32_t>(st.int64(col));
}

// SELECT <columns> FROM <table> WHERE rowid BETWEEN ?1 AND ?2 [AND pid=?3]
store::Statement select(store::Connection& db, const std::string& columns, const char* table, const Window& w, Chunk c) {
  std::string sql = "SELECT " + columns + " FROM \"" + table + "\" WHERE rowid BETWEEN ?1 AND ?2";
  if (!w.single_process) sql += " AND pid=?3";
  auto st = db.prepare(sql);
  st.bind(1, c.lo);
  st.bind(2, c.hi);
  if (!w.single_process) st.bind(3, w.pid);
  return st;
}

// Counts rows for the progress line in batches.
struct Counter {
  Progress& p;
  int64_t n = 0;
  void tick() {
    if (++n % kProgressEvery == 0) p.add(kProgressEvery);
  }
  ~Counter() { p.add(n % kProgressEvery); }
};

}  // namespace

namespace {

// min(rowid) and max(rowid) in separate queries: SQLite answers a lone min() or
// max() from the b-tree's edge, but scans the whole table for both at once.
std::optional<std::pair<int64_t, int64_t>> rowid_range(store::Connection& db, const char* table) {
  if (!db.has_table(table)) return std::nullopt;
  auto lo = db.query_int(std::string("SELECT min(rowid) FROM \"") + table + "\"");
  auto hi = db.query_int(std::string("SELECT max(rowid) FROM \"") + table + "\"");
  if (!lo || !hi) return std::nullopt;
  return std::make_pair(*lo, *hi);
}

}  // namespace

int64_t estimate_rows(store::Connection& db, const char* table) {
  auto r = rowid_range(db, table);
  return r ? r->second - r->first + 1 : 0;
}

std::vector<Chunk> split(store::Connection& db, const char* table, int parts) {
  auto r = rowid_range(db, table);
  if (!r) return {};  // no rows, nothing to scan
  const int64_t lo = r->first, hi = r->second;
  if (parts <= 1) return {Chunk{lo, hi}};
  std::vector<Chunk> out;
  const int64_t size = (hi - lo + parts) / parts;
  for (int64_t a = lo; a <= hi; a += size) out.push_back({a, std::min(hi, a + size - 1)});
  return out;
}

Progress::Progress(bool on, int64_t total) : on_(on && isatty(2)), total_(std::max<int64_t>(total, 1)) {}

void Progress::add(int64_t n) {
  int64_t now = done_.fetch_add(n, std::memory_order_relaxed) + n;
  if (!on_) return;
  auto t = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (t - last_ < std::chrono::milliseconds(250)) return;
  last_ = t;
  std::fprintf(stderr, "\rgpuscope analyze: loading %3d%% (%lld rows)",
               static_cast<int>(std::min<int64_t>(100, 100 * now / total_)), static_cast<long long>(now));
}

void Progress::finish() {
  if (on_ && done_.load() > 0) std::fprintf(stderr, "\r%60s\r", "");
}

void kernels(store::Connection& db, const Window& w, Chunk c, Slice<KernelRec>& out, KernelConfigs& configs,
             Progress& p) {
  auto st = select(db, "start, \"end\", name_id, correlation, stream, device, grid_x*grid_y*grid_z, rowid", "kernel", w, c);
  // Launch configurations of each name's first kernel, by rowid: a handful of point
  // lookups instead of six more columns on every row.
  auto config = db.prepare("SELECT grid_x, grid_y, grid_z, block_x, block_y, block_z FROM kernel WHERE rowid=?");
  std::vector<char> seen;  // by name id (string ids are small and dense)
  Counter n{p};
  while (st.step()) {
    n.tick();
    KernelRec k;
    k.start = st.int64(0);
    const int64_t end = st.int64(1);
    if (!w.keep(k.start, end)) continue;
    k.dur = sat32(end - k.start);
    k.name = id32(st, 2);
    k.corr = static_cast<uint32_t>(st.int64(3));
    k.stream = static_cast<uint32_t>(st.int64(4));
    k.device = static_cast<uint16_t>(st.int64(5));
    k.blocks = sat32(st.int64(6));
    // String ids are small and dense; a corrupt huge id just gets no launch configuration.
    if (k.name < (1u << 24) && k.name >= seen.size()) seen.resize(std::max<size_t>(k.name + 1, 2 * seen.size()), 0);
    if (k.name < seen.size() && !seen[k.name]) {
      seen[k.name] = 1;
      config.bind(1, st.int64(7));
      std::array<uint32_t, 6> g{};
      if (config.step())
        for (int i = 0; i < 6; ++i) g[static_cast<size_t>(i)] = sat32(config.int64(i));
      config.reset();
      configs.emplace(k.name, g);
    }
    out.push(k);
  }
}

void apis(store::Connection& db, const Model& m, const Window& w, Chunk c, Slice<ApiRec>& out, Progress& p) {
  std::unordered_map<uint32_t, ApiClass> classes;  // API names are few: classify each once
  auto st = select(db, "start, \"end\", name_id, correlation, return_code", "api_call", w, c);
  Counter n{p};
  while (st.step()) {
    n.tick();
    ApiRec a;
    a.start = st.int64(0);
    const int64_t end = st.int64(1);
    if (!w.keep(a.start, end)) continue;
    a.dur = sat32(end - a.start);
    a.name = id32(st, 2);
    a.corr = static_cast<uint32_t>(st.int64(3));
    a.failed = st.int64(4) != 0;
    auto it = classes.find(a.name);
    if (it == classes.end()) it = classes.emplace(a.name, classify_api(m.str(a.name))).first;
    a.cls = it->second;
    out.push(a);
  }
}

void ops(store::Connection& db, const Window& w, Chunk c, Slice<OpRec>& out, Progress& p) {
  auto st = select(db, "start, \"end\", tid, name_id, shapes_id, dtypes_id, external_id", "op", w, c);
  Counter n{p};
  while (st.step()) {
    n.tick();
    OpRec o;
    o.start = st.int64(0);
    o.end = st.int64(1);
    if (!w.keep(o.start, o.end)) continue;
    // Thread ids stay raw here (chunks load in parallel); load_events numbers them.
    o.thread = static_cast<uint32_t>(st.int64(2));
    o.name = id32(st, 3);
    o.shapes = id32(st, 4);
    o.dtypes = id32(st, 5);
    o.ext = st.is_null(6) ? -1 : st.int64(6);
    out.push(o);
  }
}

void ext_links(store::Connection& db, const Window& w, Chunk c, Slice<ExtLink>& out, Progress& p) {
  if (!db.has_table("external_correlation")) return;
  auto st = select(db, "correlation, external_id", "external_correlation", w, c);
  Counter n{p};
  while (st.step()) {
    n.tick();
    out.push({static_cast<uint32_t>(st.int64(0)), st.int64(1)});
  }
}

void copies(store::Connection& db, const Window& w, std::vector<CopyRec>& out, Progress& p) {
  Counter n{p};
  auto st = select(db, "start, \"end\", correlation, stream, device, copy_kind, src_kind, dst_kind, bytes", "memcpy", w, {});
  while (st.step()) {
    n.tick();
    CopyRec c;
    c.start = st.int64(0);
    if (!w.keep(c.start, st.int64(1))) continue;
    c.dur = sat32(st.int64(1) - c.start);
    c.corr = static_cast<uint32_t>(st.int64(2));
    c.stream = static_cast<uint32_t>(st.int64(3));
    c.device = static_cast<uint16_t>(st.int64(4));
    c.copy_kind = static_cast<uint8_t>(st.int64(5));
    c.src_kind = static_cast<uint8_t>(st.int64(6));
    c.dst_kind = static_cast<uint8_t>(st.int64(7));
    c.bytes = st.int64(8);
    out.push_back(c);
  }
  auto ms = select(db, "start, \"end\", correlation, stream, device, mem_kind, bytes", "memset", w, {});
  while (ms.step()) {
    n.tick();
    CopyRec c;
    c.memset = true;
    c.start = ms.int64(0);
    if (!w.keep(c.start, ms.int64(1))) continue;
    c.dur = sat32(ms.int64(1) - c.start);
    c.corr = static_cast<uint32_t>(ms.int64(2));
    c.stream = static_cast<uint32_t>(ms.int64(3));
    c.device = static_cast<uint16_t>(ms.int64(4));
    c.dst_kind = static_cast<uint8_t>(ms.int64(5));
    c.bytes = ms.int64(6);
    out.push_back(c);
  }
}

void syncs(store::Connection& db, const Window& w, std::vector<SyncRec>& out, Progress& p) {
  Counter n{p};
  auto st = select(db, "start, \"end\", correlation, type", "sync", w, {});
  while (st.step()) {
    n.tick();
    if (w.keep(st.int64(0), st.int64(1)))
      out.push_back({st.int64(0), st.int64(1), static_cast<uint32_t>(st.int64(2)), static_cast<uint8_t>(st.int64(3))});
  }
}

void memory(store::Connection& db, const Window& w, Model& m, Progress& p) {
  Counter n{p};
  auto st = select(db, "ts, device, op, source, mem_kind, bytes, total_allocated, total_reserved", "memory_event", w, {});
  while (st.step()) {
    n.tick();
    const int64_t ts = st.int64(0), source = st.int64(3), op = st.int64(2);
    if (!sane_times(ts, ts)) continue;
    const auto device = static_cast<uint16_t>(st.int64(1));
    if (source == schema::memory_source::torch_allocator) {
      if (st.is_null(6) && st.is_null(7)) continue;
      m.torch_mem.push_back({ts, st.is_null(6) ? -1 : st.int64(6), st.is_null(7) ? -1 : st.int64(7), device});
    } else if (source == schema::memory_source::cuda && st.int64(4) == schema::mem_kind::device) {
      const int64_t bytes = std::clamp<int64_t>(st.int64(5), 0, int64_t{1} << 44);  // 16 TB: corrupt beyond
      m.cuda_mem.push_back({ts, op == schema::memory_op::free ? -bytes : bytes, device});
    }
  }
  auto by_ts = [](const auto& a, const auto& b) { return a.ts < b.ts; };
  std::stable_sort(m.torch_mem.begin(), m.torch_mem.end(), by_ts);
  std::stable_sort(m.cuda_mem.begin(), m.cuda_mem.end(), by_ts);
}

}  // namespace gpuscope::analyzer::scan
