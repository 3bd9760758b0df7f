// Memory: peaks from the torch caching allocator (allocated, reserved) and
// from CUDA-level allocations (a running sum), against the device capacity.
#include <algorithm>

#include "analyzer/hotspots.h"

namespace gpuscope::analyzer {
namespace {

constexpr int kTimelineBuckets = 200;
// How soon after its cudaMalloc returns the caching allocator reports the block.
constexpr int64_t kAllocReportWithinNs = 1'000'000;

// Fills one series of the timeline: per bucket the largest value seen in it,
// or the last value before it when nothing happened inside.
template <class Events, class Value, class Set>
void fill_series(std::vector<MemoryPoint>& tl, int64_t lo, int64_t hi, const Events& ev, Value value, Set set) {
  if (ev.empty() || tl.empty()) return;
  const double width = static_cast<double>(hi - lo) / static_cast<double>(tl.size());
  int64_t carry = -1;
  size_t i = 0;
  for (; i < ev.size() && ev[i].ts < lo; ++i) carry = value(i);
  for (size_t b = 0; b < tl.size(); ++b) {
    const int64_t end = b + 1 == tl.size() ? hi + 1 : lo + static_cast<int64_t>(width * static_cast<double>(b + 1));
    int64_t best = carry;
    for (; i < ev.size() && ev[i].ts < end; ++i) {
      carry = value(i);
      best = std::max(best, carry);
    }
    set(tl[b], best);
  }
}

}  // namespace

MemorySummary memory_summary(const Context& c) {
  MemorySummary s;
  int64_t dev = c.device;
  if (dev < 0 && !c.m.torch_mem.empty()) dev = c.m.torch_mem.front().device;
  if (dev < 0 && !c.m.cuda_mem.empty()) dev = c.m.cuda_mem.front().device;
  if (const DeviceInfo* d = c.m.device(dev)) s.capacity = d->total_memory;

  std::vector<TorchMemRec> torch;
  for (const auto& e : c.m.torch_mem)
    if (e.device == dev) torch.push_back(e);
  for (const auto& e : torch) {
    s.peak_allocated = std::max(s.peak_allocated, e.allocated);
    s.peak_reserved = std::max(s.peak_reserved, e.reserved);
  }
  s.torch_allocator = !torch.empty();

  // CUDA-level usage: a running sum; frees of memory allocated before the
  // recording started would go negative, so the series is shifted up.
  struct Used {
    int64_t ts, used;
  };
  std::vector<Used> cuda;
  int64_t run = 0, low = 0;
  for (const auto& e : c.m.cuda_mem) {
    if (e.device != dev) continue;
    run += e.delta;
    low = std::min(low, run);
    cuda.push_back({e.ts, run});
  }
  for (auto& u : cuda) {
    u.used -= low;
    s.peak_device_used = std::max(s.peak_device_used, u.used);
  }
  s.cuda_events = !cuda.empty();
  if (s.capacity > 0) {
    int64_t peak = std::max({s.peak_allocated, s.peak_reserved, s.peak_device_used});
    s.peak_fraction = peak > 0 ? static_cast<double>(peak) / static_cast<double>(s.capacity) : 0;
  }

  for (uint32_t i : c.apis) {
    const ApiRec& a = c.m.apis[i];
    if (a.cls == ApiClass::kAlloc) ++s.cuda_allocs;
    if (a.cls == ApiClass::kFree) ++s.cuda_frees;
  }
  for (const auto& a : c.m.apis)
    if (api_is_allocator(a.cls) && a.failed) ++s.failed_allocs;
  // torch's caching allocator reports right after its cudaMalloc returns, where
  // its hook is on (the first GPUSCOPE_TORCH_MEMORY_STEPS steps of each traced
  // stretch, under record's default): a call without a report came elsewhere.
  if (s.torch_allocator && !c.m.op_steps.empty()) {
    for (uint32_t i : c.apis) {
      const ApiRec& a = c.m.apis[i];
      if (a.cls != ApiClass::kAlloc || a.failed) continue;
      auto next = std::lower_bound(torch.begin(), torch.end(), a.start,
                                   [](const TorchMemRec& e, int64_t t) { return e.ts < t; });
      if (next == torch.end() || next->ts > a.end() + kAllocReportWithinNs) ++s.unreported_allocs;
    }
  }
  s.allocs_per_step = static_cast<double>(s.cuda_allocs + s.cuda_frees) / c.n_steps;

  if (!c.steps.empty() && (s.torch_allocator || s.cuda_events)) {
    const int64_t lo = c.steps.front().start, hi = c.steps.back().end;
    const int n = static_cast<int>(std::min<int64_t>(kTimelineBuckets, std::max<int64_t>(1, (hi - lo) / 1000)));
    s.timeline.resize(static_cast<size_t>(n));
    for (int b = 0; b < n; ++b)
      s.timeline[static_cast<size_t>(b)].ts_ns = lo + static_cast<int64_t>(static_cast<double>(hi - lo) * b / n);
    fill_series(s.timeline, lo, hi, torch, [&](size_t i) { return torch[i].allocated; },
                [](MemoryPoint& p, int64_t v) { p.allocated = v; });
    fill_series(s.timeline, lo, hi, torch, [&](size_t i) { return torch[i].reserved; },
                [](MemoryPoint& p, int64_t v) { p.reserved = v; });
    fill_series(s.timeline, lo, hi, cuda, [&](size_t i) { return cuda[i].used; },
                [](MemoryPoint& p, int64_t v) { p.device_used = v; });
  }
  return s;
}

}  // namespace gpuscope::analyzer
