// Table scanners behind load_events(): each reads one rowid range of one table
// into fixed-size records. Several run at once, each on its own connection.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/model.h"
#include "trace_formats/store/sqlite.h"

namespace gpuscope::analyzer::scan {

// Which rows to keep: the process and the time window.
struct Window {
  int64_t pid = 0, lo = 0, hi = 0;
  bool single_process = false;  // every row belongs to pid: no pid filter needed
  bool keep(int64_t start, int64_t end) const { return end > lo && start < hi && sane_times(start, end); }
};

struct Chunk {
  int64_t lo = INT64_MIN + 1, hi = INT64_MAX;  // rowids, inclusive
};

// Splits a table's rowid range into `parts` chunks of about equal size; none
// when the table is empty or missing.
std::vector<Chunk> split(store::Connection& db, const char* table, int parts);
// Rows a table holds, estimated from its rowid range without scanning it.
int64_t estimate_rows(store::Connection& db, const char* table);

// Loading progress on stderr (only on a terminal).
class Progress {
 public:
  Progress(bool on, int64_t total);
  void add(int64_t n);
  void finish();

 private:
  bool on_;
  int64_t total_;
  std::atomic<int64_t> done_{0};
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_{};
};

using ExtLink = std::pair<uint32_t, int64_t>;  // (correlation, external id)

// Where a chunk's rows go: a slice of the model's vector, sized by the chunk's
// rowid range, so two chunks fill one vector without a second copy of it.
// `cap` is the rowid range's size, or less when the range looks implausible for
// the file's size; rows beyond it go to `overflow`, in order.
template <class T>
struct Slice {
  T* data = nullptr;
  size_t cap = 0, n = 0;
  std::vector<T> overflow;
  void push(const T& v) {
    if (n < cap)
      data[n++] = v;
    else
      overflow.push_back(v);
  }
};

using KernelConfigs = std::unordered_map<uint32_t, std::array<uint32_t, 6>>;  // name -> first grid, block
void kernels(store::Connection& db, const Window& w, Chunk c, Slice<KernelRec>& out, KernelConfigs& configs,
             Progress& p);
void apis(store::Connection& db, const Model& m, const Window& w, Chunk c, Slice<ApiRec>& out, Progress& p);
void ops(store::Connection& db, const Window& w, Chunk c, Slice<OpRec>& out, Progress& p);
void ext_links(store::Connection& db, const Window& w, Chunk c, Slice<ExtLink>& out, Progress& p);
void copies(store::Connection& db, const Window& w, std::vector<CopyRec>& out, Progress& p);
void syncs(store::Connection& db, const Window& w, std::vector<SyncRec>& out, Progress& p);
// Not windowed: peaks before the analysed steps still matter.
void memory(store::Connection& db, const Window& w, Model& m, Progress& p);

}  // namespace gpuscope::analyzer::scan
