// copy-overlap: host<->device copies that run while no kernel runs.
#include "analyzer/rules/rule_util.h"
#include "trace_formats/schema/enums.h"

namespace gpuscope::analyzer {
namespace {

namespace copy_kind = schema::copy_kind;
namespace mem_kind = schema::mem_kind;

constexpr double kMinSavingPct = 1.0;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "exposed pinned-copy time, share of step time, to report"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kCopyOverlapRule = {
    "copy-overlap",
    "Host-device copies do not overlap with compute",
    "HtoD/DtoH copies from or to pinned memory during which no kernel runs on the device (copies from pageable "
    "memory cannot overlap and are reported by pageable-memcpy instead).",
    "Copy time not overlapped by kernels per step, at most the step's kernel time: on a side stream, issued "
    "one step ahead, the copy runs under the previous step's compute.",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  std::vector<uint32_t> compute_streams;
  // Kernel time only (no prefix sums: a few copies a step each walk their own span).
  IntervalSet compute = IntervalSet::from_sorted_fn(c.kernels.size(), [&](size_t i) {
    const KernelRec& k = c.m.kernels[c.kernels[i]];
    return Interval{k.start, k.end()};
  }, false);
  int64_t exposed = 0, copy_time = 0, count = 0, bytes = 0, same_stream = 0;
  Tally by;
  std::vector<int64_t> per_step(c.steps.size());
  TimeRange longest;
  int64_t longest_t = 0;
  for (const auto& [stream, list] : c.kernels_by_stream) compute_streams.push_back(stream);
  for (uint32_t i : c.copies) {
    const CopyRec& x = c.m.copies[i];
    if (x.memset || (x.copy_kind != copy_kind::HtoD && x.copy_kind != copy_kind::DtoH)) continue;
    if (x.src_kind == mem_kind::pageable || x.dst_kind == mem_kind::pageable) continue;  // pageable: pageable-memcpy
    const int64_t e = x.dur - compute.covered(x.start, x.end());
    copy_time += x.dur;
    ++count;
    bytes += x.bytes;
    if (std::find(compute_streams.begin(), compute_streams.end(), x.stream) != compute_streams.end()) ++same_stream;
    if (e <= 0) continue;
    exposed += e;
    std::string op = user_op_name(c, x.corr);
    by.add(std::string(copy_kind::name(x.copy_kind)) + " pinned" + (op.empty() ? "" : " from " + op), e, 1);
    if (int s = c.step_of(x.start); s >= 0) per_step[static_cast<size_t>(s)] += e;
    if (e > longest_t) {
      longest_t = e;
      longest = {x.start, x.end(), "copy with no kernel running: " + format_bytes(static_cast<double>(x.bytes))};
    }
  }
  const int64_t saving = std::min(exposed, compute.intersect(c.step_set).total());
  if (count == 0 || c.pct_of_step(saving) < kMinSavingPct) return std::nullopt;
  Finding f = make_finding(kCopyOverlapRule, c, static_cast<double>(saving));
  f.evidence.summary = format_fixed(static_cast<double>(count) / c.n_steps, 1) + " pinned copies per step (" +
                       format_bytes(static_cast<double>(bytes) / c.n_steps) + ") leave " + ms(c.ms_per_step(exposed)) +
                       " per step with no kernel running; " + std::to_string(same_stream) + " of " +
                       std::to_string(count) + " run on a stream that also runs compute.";
  f.evidence.metrics = {
      {"pinned_copies_per_step", static_cast<double>(count) / c.n_steps, "count"},
      {"copy_ms_per_step", c.ms_per_step(copy_time), "ms"},
      {"exposed_copy_ms_per_step", c.ms_per_step(exposed), "ms"},
      {"copies_on_compute_streams", static_cast<double>(same_stream), "count"},
  };
  f.evidence.top = by.top(5);
  if (longest_t > 0) f.evidence.ranges.push_back(longest);
  auto worst = worst_steps(c, per_step, 3, "of copies not overlapped");
  f.evidence.ranges.insert(f.evidence.ranges.end(), worst.begin(), worst.end());
  f.fix.text = "Copy the next batch on a side stream while the current step computes: pinned source, "
               "non_blocking=True, and make the compute stream wait only for that copy.";
  f.fix.code =
      "copy_stream = torch.cuda.Stream()\n"
      "def to_gpu(batch):\n"
      "    with torch.cuda.stream(copy_stream):\n"
      "        return [t.to(\"cuda\", non_blocking=True) for t in batch]   # t pinned\n"
      "it = iter(loader)\n"
      "nxt = to_gpu(next(it))\n"
      "for _ in range(steps):\n"
      "    torch.cuda.current_stream().wait_stream(copy_stream)\n"
      "    x, y = nxt\n"
      "    for t in (x, y):\n"
      "        t.record_stream(torch.cuda.current_stream())\n"
      "    nxt = to_gpu(next(it))          # overlaps with this step\n"
      "    train_step(x, y)\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
