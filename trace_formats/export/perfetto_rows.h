// Rows of the Perfetto export's time-ordered pass, in one compact shape for
// every table, and the order they are written in.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpuscope::formats {

// What a row is. Rows with equal start and end go in this order, which puts
// ranges before ops before API calls before GPU work (parents first).
enum Source : uint8_t {
  kSrcRange = 0, kSrcOp, kSrcApi, kSrcKernel, kSrcMemcpy, kSrcMemset, kSrcLaneRange, kSrcGpuAnnotation,
  kSrcMark, kSrcSync, kSrcStep, kSrcCounter, kSrcMemory, kSrcGpuscope, kSourceCount
};

// 64 bytes. Field use by source:
//   k1: pid (all)
//   k2: tid (ranges, ops, API calls, marks); device (GPU rows, counters with
//       -1 for host ones, memory); category-or-0 (GPU annotations)
//   k3: stream (GPU rows); tid (GPU annotations); total reserved or -1 (memory)
//   name: string id, or kTextName - i for texts[i] (built names: copies, sets, syncs, steps)
//   x: correlation (API calls, GPU rows); total allocated (memory); the value's bits (counters)
struct TimedRow {
  int64_t start = 0, end = 0;
  int64_t k1 = 0, k2 = 0, k3 = 0;
  int64_t name = 0;
  int64_t x = 0;
  Source src = kSrcRange;
  uint8_t flags = 0;

  // Python function range; driver API call; host counter; memory without a reserved total.
  static constexpr uint8_t kAlt = 1;
  // pid and correlation are both non-NULL, so the correlation can match.
  static constexpr uint8_t kCorrelated = 2;
  // A GPU row without a pid (counted in no device's processes).
  static constexpr uint8_t kNullPid = 4;
  // A range that is CUPTI's overhead record (source tracer_overhead), not the job's.
  static constexpr uint8_t kTracer = 8;
  static constexpr int64_t kTextName = -1;
};
static_assert(sizeof(TimedRow) == 64, "keep rows compact: the in-memory sort holds them all");

// Write order: start, then longer first, then source; callers keep row id
// order among equal keys.
inline bool row_before(const TimedRow& a, const TimedRow& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  return a.src < b.src;
}

// Names built from codes ("Memcpy HtoD (Pageable -> Device)", "step 3"),
// numbered once each so rows carry an index instead of a string.
class RowTexts {
 public:
  int64_t name_of(std::string text) {
    auto [it, added] = index_.emplace(std::move(text), static_cast<int64_t>(texts_.size()));
    if (added) texts_.push_back(&it->first);
    return TimedRow::kTextName - it->second;
  }
  static bool is_text(int64_t name) { return name <= TimedRow::kTextName; }
  static size_t index(int64_t name) { return static_cast<size_t>(TimedRow::kTextName - name); }
  const std::string& text(int64_t name) const { return *texts_[index(name)]; }
  size_t size() const { return texts_.size(); }

 private:
  std::unordered_map<std::string, int64_t> index_;
  std::vector<const std::string*> texts_;
};

}  // namespace gpuscope::formats
