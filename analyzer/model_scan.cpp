// Column lists are kept to what the analysis uses: SQLite spends most of a scan
// decoding columns, so each one costs ~20 ns a row. For the same reason the
// time window is applied here on columns read anyway instead of in a WHERE.
// The loops read each column by the index its name resolves to before the loop,
// not through store::Cursor, whose dispatch per column and row (a switch on the
// column in Record::read) made the whole analysis of bench/analyzer/run_bench.sh's
// recording about 7 % slower. A NULL integer reads as 0 here.
#include "analyzer/model_scan.h"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "trace_formats/schema/enums.h"
#include "trace_formats/store/cursor.h"

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
  auto st = select(db, "start, \"end\", name_id, correlation, stream, device, grid_x*grid_y*grid_z AS blocks, rowid AS row",
                   "kernel", w, c);
  const int start = st.column("start"), end_ = st.column("end"), name = st.column("name_id"),
            corr = st.column("correlation"), stream = st.column("stream"), device = st.column("device"),
            blocks = st.column("blocks"), row = st.column("row");
  // Launch configurations of each name's first kernel, by rowid: a handful of point
  // lookups instead of six more columns on every row.
  using K = store::rec::Kernel;
  store::Cursor<K> config(db, {K::kGridX, K::kGridY, K::kGridZ, K::kBlockX, K::kBlockY, K::kBlockZ}, "WHERE rowid=?1");
  std::vector<char> seen;  // by name id (string ids are small and dense)
  Counter n{p};
  while (st.step()) {
    n.tick();
    KernelRec k;
    k.start = st.int64(start);
    const int64_t end = st.int64(end_);
    if (!w.keep(k.start, end)) continue;
    k.dur = sat32(end - k.start);
    k.name = id32(st, name);
    k.corr = static_cast<uint32_t>(st.int64(corr));
    k.stream = static_cast<uint32_t>(st.int64(stream));
    k.device = static_cast<uint16_t>(st.int64(device));
    k.blocks = sat32(st.int64(blocks));
    // String ids are small and dense; a corrupt huge id just gets no launch configuration.
    if (k.name < (1u << 24) && k.name >= seen.size()) seen.resize(std::max<size_t>(k.name + 1, 2 * seen.size()), 0);
    if (k.name < seen.size() && !seen[k.name]) {
      seen[k.name] = 1;
      config.bind(1, st.int64(row));
      std::array<uint32_t, 6> g{};
      if (config.next())  // NULL reads as kNull, which sat32 makes 0 as it does SQLite's 0
        g = {sat32(config->grid_x),  sat32(config->grid_y),  sat32(config->grid_z),
             sat32(config->block_x), sat32(config->block_y), sat32(config->block_z)};
      config.reset();
      configs.emplace(k.name, g);
    }
    out.push(k);
  }
}

void apis(store::Connection& db, const Model& m, const Window& w, Chunk c, Slice<ApiRec>& out, Progress& p) {
  std::unordered_map<uint32_t, ApiClass> classes;  // API names are few: classify each once
  auto st = select(db, "start, \"end\", name_id, correlation, return_code", "api_call", w, c);
  const int start = st.column("start"), end_ = st.column("end"), name = st.column("name_id"),
            corr = st.column("correlation"), rc = st.column("return_code");
  Counter n{p};
  while (st.step()) {
    n.tick();
    ApiRec a;
    a.start = st.int64(start);
    const int64_t end = st.int64(end_);
    if (!w.keep(a.start, end)) continue;
    a.dur = sat32(end - a.start);
    a.name = id32(st, name);
    a.corr = static_cast<uint32_t>(st.int64(corr));
    a.failed = st.int64(rc) != 0;
    auto it = classes.find(a.name);
    if (it == classes.end()) it = classes.emplace(a.name, classify_api(m.str(a.name))).first;
    a.cls = it->second;
    out.push(a);
  }
}

void ops(store::Connection& db, const Window& w, Chunk c, Slice<OpRec>& out, Progress& p) {
  auto st = select(db, "start, \"end\", tid, name_id, shapes_id, dtypes_id, external_id", "op", w, c);
  const int start = st.column("start"), end = st.column("end"), tid = st.column("tid"), name = st.column("name_id"),
            shapes = st.column("shapes_id"), dtypes = st.column("dtypes_id"), ext = st.column("external_id");
  Counter n{p};
  while (st.step()) {
    n.tick();
    OpRec o;
    o.start = st.int64(start);
    o.end = st.int64(end);
    if (!w.keep(o.start, o.end)) continue;
    // Thread ids stay raw here (chunks load in parallel); load_events numbers them.
    o.thread = static_cast<uint32_t>(st.int64(tid));
    o.name = id32(st, name);
    o.shapes = id32(st, shapes);
    o.dtypes = id32(st, dtypes);
    o.ext = st.is_null(ext) ? -1 : st.int64(ext);
    out.push(o);
  }
}

void ext_links(store::Connection& db, const Window& w, Chunk c, Slice<ExtLink>& out, Progress& p) {
  if (!db.has_table("external_correlation")) return;
  auto st = select(db, "correlation, external_id", "external_correlation", w, c);
  const int corr = st.column("correlation"), ext = st.column("external_id");
  Counter n{p};
  while (st.step()) {
    n.tick();
    out.push({static_cast<uint32_t>(st.int64(corr)), st.int64(ext)});
  }
}

void copies(store::Connection& db, const Window& w, std::vector<CopyRec>& out, Progress& p) {
  Counter n{p};
  auto st = select(db, "start, \"end\", correlation, stream, device, copy_kind, src_kind, dst_kind, bytes", "memcpy", w, {});
  {
    const int start = st.column("start"), end = st.column("end"), corr = st.column("correlation"),
              stream = st.column("stream"), device = st.column("device"), copy_kind = st.column("copy_kind"),
              src_kind = st.column("src_kind"), dst_kind = st.column("dst_kind"), bytes = st.column("bytes");
    while (st.step()) {
      n.tick();
      CopyRec c;
      c.start = st.int64(start);
      if (!w.keep(c.start, st.int64(end))) continue;
      c.dur = sat32(st.int64(end) - c.start);
      c.corr = static_cast<uint32_t>(st.int64(corr));
      c.stream = static_cast<uint32_t>(st.int64(stream));
      c.device = static_cast<uint16_t>(st.int64(device));
      c.copy_kind = static_cast<uint8_t>(st.int64(copy_kind));
      c.src_kind = static_cast<uint8_t>(st.int64(src_kind));
      c.dst_kind = static_cast<uint8_t>(st.int64(dst_kind));
      c.bytes = st.int64(bytes);
      out.push_back(c);
    }
  }
  auto ms = select(db, "start, \"end\", correlation, stream, device, mem_kind, bytes", "memset", w, {});
  const int start = ms.column("start"), end = ms.column("end"), corr = ms.column("correlation"),
            stream = ms.column("stream"), device = ms.column("device"), kind = ms.column("mem_kind"),
            bytes = ms.column("bytes");
  while (ms.step()) {
    n.tick();
    CopyRec c;
    c.memset = true;
    c.start = ms.int64(start);
    if (!w.keep(c.start, ms.int64(end))) continue;
    c.dur = sat32(ms.int64(end) - c.start);
    c.corr = static_cast<uint32_t>(ms.int64(corr));
    c.stream = static_cast<uint32_t>(ms.int64(stream));
    c.device = static_cast<uint16_t>(ms.int64(device));
    c.dst_kind = static_cast<uint8_t>(ms.int64(kind));
    c.bytes = ms.int64(bytes);
    out.push_back(c);
  }
}

void syncs(store::Connection& db, const Window& w, std::vector<SyncRec>& out, Progress& p) {
  Counter n{p};
  auto st = select(db, "start, \"end\", correlation, type", "sync", w, {});
  const int start = st.column("start"), end = st.column("end"), corr = st.column("correlation"), type = st.column("type");
  while (st.step()) {
    n.tick();
    if (w.keep(st.int64(start), st.int64(end)))
      out.push_back({st.int64(start), st.int64(end), static_cast<uint32_t>(st.int64(corr)), static_cast<uint8_t>(st.int64(type))});
  }
}

void memory(store::Connection& db, const Window& w, Model& m, Progress& p) {
  Counter n{p};
  auto st = select(db, "ts, device, op, source, mem_kind, bytes, total_allocated, total_reserved", "memory_event", w, {});
  const int ts_ = st.column("ts"), device_ = st.column("device"), op_ = st.column("op"), source_ = st.column("source"),
            kind = st.column("mem_kind"), bytes_ = st.column("bytes"), allocated = st.column("total_allocated"),
            reserved = st.column("total_reserved");
  while (st.step()) {
    n.tick();
    const int64_t ts = st.int64(ts_), source = st.int64(source_), op = st.int64(op_);
    if (!sane_times(ts, ts)) continue;
    const auto device = static_cast<uint16_t>(st.int64(device_));
    if (source == schema::memory_source::torch_allocator) {
      if (st.is_null(allocated) && st.is_null(reserved)) continue;
      m.torch_mem.push_back(
          {ts, st.is_null(allocated) ? -1 : st.int64(allocated), st.is_null(reserved) ? -1 : st.int64(reserved), device});
    } else if (source == schema::memory_source::cuda && st.int64(kind) == schema::mem_kind::device) {
      const int64_t bytes = std::clamp<int64_t>(st.int64(bytes_), 0, int64_t{1} << 44);  // 16 TB: corrupt beyond
      m.cuda_mem.push_back({ts, op == schema::memory_op::free ? -bytes : bytes, device});
    }
  }
  auto by_ts = [](const auto& a, const auto& b) { return a.ts < b.ts; };
  std::stable_sort(m.torch_mem.begin(), m.torch_mem.end(), by_ts);
  std::stable_sort(m.cuda_mem.begin(), m.cuda_mem.end(), by_ts);
}

}  // namespace gpuscope::analyzer::scan
