// pageable-memcpy: host<->device copies from pageable (not page-locked) memory.
#include "analyzer/rules/rule_util.h"
#include "trace_formats/schema/enums.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 1.0;
// Pinned copies reach about twice the bandwidth of pageable ones (the driver
// stages pageable memory through a pinned bounce buffer, chunk by chunk).
constexpr double kPinnedSpeedup = 2.0;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "estimated saving, share of step time, to report"},
    {"kPinnedSpeedup", kPinnedSpeedup, "x", "assumed bandwidth of pinned over pageable host<->device copies"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kPageableMemcpyRule = {
    "pageable-memcpy",
    "Host-device copies use pageable memory",
    "memcpy activity whose host side is pageable memory (src_kind or dst_kind = pageable).",
    "pageable copy time per step x (1 - 1/kPinnedSpeedup); non_blocking copies from pinned memory may also "
    "overlap with compute, which this estimate does not count.",
    kThresholds,
    evaluate,
};

namespace {

const char* direction(uint8_t kind) {
  switch (kind) {
    case schema::copy_kind::HtoD: return "HtoD";
    case schema::copy_kind::DtoH: return "DtoH";
    default: return "other";
  }
}

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  int64_t time = 0, bytes = 0, count = 0, sync_calls = 0;
  Tally by;
  std::vector<int64_t> per_step(c.steps.size());
  TimeRange longest;
  for (uint32_t i : c.copies) {
    const CopyRec& x = c.m.copies[i];
    if (x.memset || (x.src_kind != schema::mem_kind::pageable && x.dst_kind != schema::mem_kind::pageable)) continue;
    time += x.dur;
    bytes += x.bytes;
    ++count;
    uint32_t api = c.m.api_by_corr.find(x.corr);
    std::string api_name = api == kNone ? "" : c.name(c.m.apis[api].name);
    if (api != kNone && c.m.apis[api].cls == ApiClass::kMemcpySync) ++sync_calls;
    std::string op = user_op_name(c, x.corr);
    std::string label = std::string(direction(x.copy_kind)) + " pageable" + (op.empty() ? "" : " from " + op);
    by.add(label, x.dur, 1, api_name.empty() ? "" : "via " + api_name);
    if (int s = c.step_of(x.start); s >= 0) per_step[static_cast<size_t>(s)] += x.dur;
    if (x.dur > longest.end_ns - longest.start_ns)
      longest = {x.start, x.end(), "longest pageable copy: " + format_bytes(static_cast<double>(x.bytes))};
  }
  const double saving = static_cast<double>(time) * (1.0 - 1.0 / kPinnedSpeedup);
  if (count == 0 || c.pct_of_step(static_cast<int64_t>(saving)) < kMinSavingPct) return std::nullopt;
  Finding f = make_finding(kPageableMemcpyRule, c, saving);
  const double gbps = time > 0 ? static_cast<double>(bytes) / static_cast<double>(time) : 0;  // bytes/ns = GB/s
  f.evidence.summary = format_fixed(static_cast<double>(count) / c.n_steps, 1) + " copies per step move " +
                       format_bytes(static_cast<double>(bytes) / c.n_steps) + " through pageable host memory in " +
                       ms(c.ms_per_step(time)) + " per step (" + format_fixed(gbps, 1) + " GB/s).";
  f.evidence.metrics = {
      {"pageable_copies_per_step", static_cast<double>(count) / c.n_steps, "count"},
      {"pageable_copy_ms_per_step", c.ms_per_step(time), "ms"},
      {"pageable_bytes_per_step", static_cast<double>(bytes) / c.n_steps, "bytes"},
      {"pageable_gb_per_s", gbps, "GB/s"},
      {"synchronous_copy_calls_per_step", static_cast<double>(sync_calls) / c.n_steps, "count"},
      {"assumed_pinned_speedup", kPinnedSpeedup, "x"},
  };
  f.evidence.top = by.top(5);
  if (longest.end_ns > longest.start_ns) f.evidence.ranges.push_back(longest);
  auto worst = worst_steps(c, per_step, 3, "in pageable copies");
  f.evidence.ranges.insert(f.evidence.ranges.end(), worst.begin(), worst.end());
  f.fix.text = "Copy from page-locked (pinned) host memory with non_blocking=True: the DataLoader pins batches "
               "with pin_memory=True; buffers you build yourself can be pinned once and reused.";
  f.fix.code =
      "loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size,\n"
      "                                     num_workers=4, pin_memory=True)\n"
      "for x, y in loader:\n"
      "    x = x.to(\"cuda\", non_blocking=True)\n"
      "    y = y.to(\"cuda\", non_blocking=True)\n"
      "\n"
      "# host tensors made by hand: pin a staging buffer once and reuse it\n"
      "staging = torch.empty(shape, dtype=dtype, pin_memory=True)\n"
      "staging.copy_(host_tensor)\n"
      "device_tensor.copy_(staging, non_blocking=True)\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
