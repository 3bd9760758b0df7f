// Column lists are kept to what the analysis uses: SQLite spends most of a scan
// decoding columns, so each one costs ~20 ns a row. For the same reason the
// time window is applied here on columns read anyway instead of in a WHERE.
#include "analyzer/model_scan.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <optional>
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

// grid_x*grid_y*grid_z saturated as sat32 saturates it: a corrupt grid can
// overflow int64, and a NULL dimension makes no blocks.
uint32_t blocks(const store::rec::Kernel& k) {
  using K = store::rec::Kernel;
  if (k.null(K::kGridX) || k.null(K::kGridY) || k.null(K::kGridZ)) return 0;
  int64_t xy = 0, xyz = 0;
  if (__builtin_mul_overflow(k.grid_x, k.grid_y, &xy) || __builtin_mul_overflow(xy, k.grid_z, &xyz))
    return (k.grid_x < 0) ^ (k.grid_y < 0) ^ (k.grid_z < 0) ? 0 : UINT32_MAX;
  return sat32(xyz);
}

// Cursor over one rowid chunk of a table: w.pid's rows, unless the file holds no other process.
template <class R>
store::Cursor<R> chunk_rows(store::Connection& db, std::initializer_list<typename R::Column> columns, const Window& w,
                            Chunk c) {
  store::Cursor<R> rows(db, columns,
                        w.single_process ? "WHERE rowid BETWEEN ?1 AND ?2" : "WHERE rowid BETWEEN ?1 AND ?2 AND pid=?3");
  rows.bind(1, c.lo).bind(2, c.hi);
  if (!w.single_process) rows.bind(3, w.pid);
  return rows;
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
  using K = store::rec::Kernel;
  auto rows = chunk_rows<K>(db, {K::kStart, K::kEnd, K::kNameId, K::kCorrelation, K::kStream, K::kDevice, K::kGridX,
                                K::kGridY, K::kGridZ, K::kId}, w, c);
  // Block sizes of each name's first kernel, by id (the rowid): a handful of
  // point lookups instead of three more columns on every row.
  store::Cursor<K> config(db, {K::kBlockX, K::kBlockY, K::kBlockZ}, "WHERE id=?1");
  std::vector<char> seen;  // by name id (string ids are small and dense)
  Counter n{p};
  while (rows.next()) {
    n.tick();
    KernelRec k;
    k.start = or_zero(rows->start);
    const int64_t end = or_zero(rows->end);
    if (!w.keep(k.start, end)) continue;
    k.dur = sat32(end - k.start);
    k.name = id32(rows->name_id);
    // A NULL (kNull) narrows to 0, as SQLite reads it.
    k.corr = static_cast<uint32_t>(rows->correlation);
    k.stream = static_cast<uint32_t>(rows->stream);
    k.device = static_cast<uint16_t>(rows->device);
    k.blocks = blocks(rows.row());
    // String ids are small and dense; a corrupt huge id just gets no launch configuration.
    if (k.name < (1u << 24) && k.name >= seen.size()) seen.resize(std::max<size_t>(k.name + 1, 2 * seen.size()), 0);
    if (k.name < seen.size() && !seen[k.name]) {
      seen[k.name] = 1;
      config.bind(1, rows->id);
      std::array<uint32_t, 6> g{};
      if (config.next())
        g = {sat32(rows->grid_x),    sat32(rows->grid_y),    sat32(rows->grid_z),
             sat32(config->block_x), sat32(config->block_y), sat32(config->block_z)};
      config.reset();
      configs.emplace(k.name, g);
    }
    out.push(k);
  }
}

void apis(store::Connection& db, const Model& m, const Window& w, Chunk c, Slice<ApiRec>& out, Progress& p) {
  using A = store::rec::ApiCall;
  std::unordered_map<uint32_t, ApiClass> classes;  // API names are few: classify each once
  auto rows = chunk_rows<A>(db, {A::kStart, A::kEnd, A::kNameId, A::kCorrelation, A::kReturnCode}, w, c);
  Counter n{p};
  while (rows.next()) {
    n.tick();
    ApiRec a;
    a.start = or_zero(rows->start);
    const int64_t end = or_zero(rows->end);
    if (!w.keep(a.start, end)) continue;
    a.dur = sat32(end - a.start);
    a.name = id32(rows->name_id);
    a.corr = static_cast<uint32_t>(rows->correlation);
    a.failed = or_zero(rows->return_code) != 0;
    auto it = classes.find(a.name);
    if (it == classes.end()) it = classes.emplace(a.name, classify_api(m.str(a.name))).first;
    a.cls = it->second;
    out.push(a);
  }
}

void ops(store::Connection& db, const Window& w, Chunk c, Slice<OpRec>& out, Progress& p) {
  using O = store::rec::Op;
  auto rows = chunk_rows<O>(db, {O::kStart, O::kEnd, O::kTid, O::kNameId, O::kShapesId, O::kDtypesId, O::kExternalId}, w, c);
  Counter n{p};
  while (rows.next()) {
    n.tick();
    OpRec o;
    o.start = or_zero(rows->start);
    o.end = or_zero(rows->end);
    if (!w.keep(o.start, o.end)) continue;
    // Thread ids stay raw here (chunks load in parallel); load_events numbers them.
    o.thread = static_cast<uint32_t>(rows->tid);
    o.name = id32(rows->name_id);
    o.shapes = id32(rows->shapes_id);
    o.dtypes = id32(rows->dtypes_id);
    o.ext = rows->null(O::kExternalId) ? -1 : rows->external_id;
    out.push(o);
  }
}

void ext_links(store::Connection& db, const Window& w, Chunk c, Slice<ExtLink>& out, Progress& p) {
  using E = store::rec::ExternalCorrelation;
  if (!db.has_table(E::kTable)) return;
  auto rows = chunk_rows<E>(db, {E::kCorrelation, E::kExternalId}, w, c);
  Counter n{p};
  while (rows.next()) {
    n.tick();
    out.push({static_cast<uint32_t>(rows->correlation), or_zero(rows->external_id)});
  }
}

void copies(store::Connection& db, const Window& w, std::vector<CopyRec>& out, Progress& p) {
  using C = store::rec::Memcpy;
  using S = store::rec::Memset;
  Counter n{p};
  auto cp = chunk_rows<C>(db, {C::kStart, C::kEnd, C::kCorrelation, C::kStream, C::kDevice, C::kCopyKind, C::kSrcKind,
                               C::kDstKind, C::kBytes}, w, {});
  while (cp.next()) {
    n.tick();
    CopyRec c;
    c.start = or_zero(cp->start);
    const int64_t end = or_zero(cp->end);
    if (!w.keep(c.start, end)) continue;
    c.dur = sat32(end - c.start);
    c.corr = static_cast<uint32_t>(cp->correlation);
    c.stream = static_cast<uint32_t>(cp->stream);
    c.device = static_cast<uint16_t>(cp->device);
    c.copy_kind = static_cast<uint8_t>(cp->copy_kind);
    c.src_kind = static_cast<uint8_t>(cp->src_kind);
    c.dst_kind = static_cast<uint8_t>(cp->dst_kind);
    c.bytes = or_zero(cp->bytes);
    out.push_back(c);
  }
  auto ms = chunk_rows<S>(db, {S::kStart, S::kEnd, S::kCorrelation, S::kStream, S::kDevice, S::kMemKind, S::kBytes}, w, {});
  while (ms.next()) {
    n.tick();
    CopyRec c;
    c.memset = true;
    c.start = or_zero(ms->start);
    const int64_t end = or_zero(ms->end);
    if (!w.keep(c.start, end)) continue;
    c.dur = sat32(end - c.start);
    c.corr = static_cast<uint32_t>(ms->correlation);
    c.stream = static_cast<uint32_t>(ms->stream);
    c.device = static_cast<uint16_t>(ms->device);
    c.dst_kind = static_cast<uint8_t>(ms->mem_kind);
    c.bytes = or_zero(ms->bytes);
    out.push_back(c);
  }
}

void syncs(store::Connection& db, const Window& w, std::vector<SyncRec>& out, Progress& p) {
  using S = store::rec::Sync;
  Counter n{p};
  auto rows = chunk_rows<S>(db, {S::kStart, S::kEnd, S::kCorrelation, S::kType}, w, {});
  while (rows.next()) {
    n.tick();
    const int64_t start = or_zero(rows->start), end = or_zero(rows->end);
    if (w.keep(start, end))
      out.push_back({start, end, static_cast<uint32_t>(rows->correlation), static_cast<uint8_t>(rows->type)});
  }
}

void memory(store::Connection& db, const Window& w, Model& m, Progress& p) {
  using E = store::rec::MemoryEvent;
  Counter n{p};
  auto rows = chunk_rows<E>(db, {E::kTs, E::kDevice, E::kOp, E::kSource, E::kMemKind, E::kBytes, E::kTotalAllocated,
                                E::kTotalReserved}, w, {});
  while (rows.next()) {
    n.tick();
    const int64_t ts = or_zero(rows->ts), source = rows->source;
    if (!sane_times(ts, ts)) continue;
    const auto device = static_cast<uint16_t>(rows->device);
    if (source == schema::memory_source::torch_allocator) {
      const bool no_allocated = rows->null(E::kTotalAllocated), no_reserved = rows->null(E::kTotalReserved);
      if (no_allocated && no_reserved) continue;
      m.torch_mem.push_back({ts, no_allocated ? -1 : rows->total_allocated, no_reserved ? -1 : rows->total_reserved, device});
    } else if (source == schema::memory_source::cuda && rows->mem_kind == schema::mem_kind::device) {
      const int64_t bytes = std::clamp<int64_t>(rows->bytes, 0, int64_t{1} << 44);  // 16 TB: corrupt beyond; NULL: 0
      m.cuda_mem.push_back({ts, rows->op == schema::memory_op::free ? -bytes : bytes, device});
    }
  }
  auto by_ts = [](const auto& a, const auto& b) { return a.ts < b.ts; };
  std::stable_sort(m.torch_mem.begin(), m.torch_mem.end(), by_ts);
  std::stable_sort(m.cuda_mem.begin(), m.cuda_mem.end(), by_ts);
}

}  // namespace gpuscope::analyzer::scan
