// fusion: chains of memory-bound ATen kernels (pointwise, reductions, norms,
// casts) that a compiler's fused kernels could replace.
#include "analyzer/rules/rule_util.h"

#include <array>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuscope::analyzer {
namespace {

// Below 5 % the estimate is not to be trusted: on MLPs whose memory-bound work is one
// activation between GEMMs (tests/gpu/models healthy, sync_loop) torch.compile saved
// nothing while the model below gives 4-5 %.
constexpr double kMinSavingPct = 5.0;
// torch.compile on the H200 (tests/gpu/models): eager -> compiled saved 47 % of the
// memory-bound kernel time of a bf16 transformer encoder and 39 % of GPT-2's (fp32).
// ResNet-50 (fp32 NCHW, two thirds of its memory-bound time in cuDNN batch norm) is a
// check the factor was not fitted to: compiled it saved 9.6-36.6 % of the step over
// three machine starts (mean 20.6 %), against 22.3 % estimated; a separate factor for
// batch norm fitted to the first of those runs did worse on the mean (2026-12-04).
constexpr double kCompileSpeedup = 1.8;
constexpr double kMinChainKernels = 2;
// Compile fuses kernels that work on the same data. Where most memory-bound time is in
// kernels standing alone between GEMMs (one activation, autocast's weight casts) it has
// nothing to fuse: on the H200 the share in chains was 0.05 on an MLP where compile saved
// 0 % (samples/advisor/healthy.py), 0.51-0.90 on the transformer, GPT-2 and ResNet-50 (25, 5.5, 16 %).
constexpr double kMinChainedShare = 0.3;
constexpr double kMaxKernelUs = 1000;  // longer kernels are rarely left unfused by accident
constexpr double kMaxChainGapUs = 100;  // kernels further apart are not one chain

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "estimated saving, share of step time, to report"},
    {"kCompileSpeedup", kCompileSpeedup, "x", "assumed speedup of compiled (fused) code over eager memory-bound kernels"},
    {"kMinChainKernels", kMinChainKernels, "kernels", "consecutive memory-bound kernels on one stream that make a chain"},
    {"kMinChainedShare", kMinChainedShare, "of memory-bound time", "share in chains below which nothing is reported"},
    {"kMaxKernelUs", kMaxKernelUs, "us", "longest memory-bound kernel counted in a chain"},
    {"kMaxChainGapUs", kMaxChainGapUs, "us", "largest gap between two kernels of one chain"},
};

std::optional<Finding> evaluate(const RuleInput& in);

// The tensor shapes of an op's recorded inputs ("[[8,4],[],[4]]" -> "[8,4]", "[4]"),
// scalars left out.
std::vector<std::string_view> tensor_shapes(std::string_view text) {
  std::vector<std::string_view> out;
  if (text.size() < 2 || text.front() != '[') return out;
  size_t i = 1;
  while (i < text.size()) {
    if (text[i] != '[') {
      ++i;
      continue;
    }
    const size_t end = text.find(']', i);
    if (end == std::string_view::npos) break;
    if (end > i + 1) out.push_back(text.substr(i, end - i + 1));
    i = end + 1;
  }
  return out;
}

}  // namespace

extern const Rule kFusionRule = {
    "fusion",
    "Chains of memory-bound kernels could be fused",
    "Runs of at least kMinChainKernels consecutive memory-bound ATen kernels (pointwise, reductions, norms, "
    "softmax, casts and copies; not GEMMs, attention, collectives or the optimizer's multi-tensor kernels) on one "
    "stream, each at most kMaxKernelUs long and at most kMaxChainGapUs apart, whose ops share an input tensor "
    "shape with the previous one (when shapes were recorded), holding at least kMinChainedShare of the memory-bound "
    "kernel time.",
    "The time of every memory-bound kernel x (1 - 1/kCompileSpeedup): TorchInductor fuses them with their "
    "neighbours, so each tensor is read and written fewer times. The factor is measured (torch.compile on two "
    "transformers, H200); chain counts are evidence of where the fusion happens.",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  const auto max_dur = static_cast<int64_t>(kMaxKernelUs * 1000);
  const auto max_gap = static_cast<int64_t>(kMaxChainGapUs * 1000);
  int64_t chains = 0, chained = 0, chain_time = 0;
  // Chains are counted by the ids of their first ops (or kernels) and named at the end:
  // a long run can hold hundreds of thousands of chains.
  struct Signature {
    std::array<uint64_t, 4> ids;
    uint32_t n;
    bool operator==(const Signature&) const = default;
  };
  struct SigHash {
    size_t operator()(const Signature& s) const {
      size_t h = s.n;
      for (uint64_t id : s.ids) h = h * 1000003u ^ std::hash<uint64_t>{}(id);
      return h;
    }
  };
  struct Acc {
    int64_t saved = 0, count = 0, time = 0;
  };
  std::unordered_map<Signature, Acc, SigHash> by_sig;
  std::vector<int64_t> per_step(c.steps.size());
  struct Best {
    double saving = 0;
    TimeRange range;
  };
  std::vector<Best> best;

  // Elementwise kernels in a row fuse only when they work on the same data. Ops
  // without a tensor shape in common (an activation, then autocast's cast of the
  // next layer's weight) are independent work that fusing would not shrink.
  std::unordered_map<uint32_t, std::vector<std::string_view>> shapes_of;  // by shapes string id
  auto shapes = [&](uint32_t op) -> const std::vector<std::string_view>* {
    if (op == kNone || c.m.ops[op].shapes == kNone) return nullptr;
    const uint32_t id = c.m.ops[op].shapes;
    auto it = shapes_of.find(id);
    if (it == shapes_of.end()) it = shapes_of.emplace(id, tensor_shapes(c.m.str(id))).first;
    return it->second.empty() ? nullptr : &it->second;
  };
  auto same_data = [&](const KernelRec& a, const KernelRec& b) {
    const auto *sa = shapes(c.op_of_corr(a.corr)), *sb = shapes(c.op_of_corr(b.corr));
    if (!sa || !sb) return true;  // unknown: do not split
    for (std::string_view x : *sa)
      for (std::string_view y : *sb)
        if (x == y) return true;
    return false;
  };

  int64_t memory_bound = 0;
  for (const auto& stream_kernels : c.kernels_by_stream) {
    const auto& list = stream_kernels.second;  // a plain reference: lambdas may capture it (C++20 clang 14)
    for (uint32_t k : list) {
      const KernelRec& kr = c.m.kernels[k];
      const int step = c.kc(kr.name).has(kMemoryBound) ? c.step_of(kr.start) : -1;
      if (step < 0) continue;
      memory_bound += kr.dur;
      per_step[static_cast<size_t>(step)] += kr.dur;
    }
    size_t i = 0;
    while (i < list.size()) {
      auto short_ew = [&](size_t j) {
        const KernelRec& k = c.m.kernels[list[j]];
        return c.kc(k.name).has(kMemoryBound) && k.dur <= max_dur;
      };
      if (!short_ew(i)) {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < list.size() && short_ew(j) &&
             c.m.kernels[list[j]].start - c.m.kernels[list[j - 1]].end() <= max_gap &&
             same_data(c.m.kernels[list[j - 1]], c.m.kernels[list[j]]))
        ++j;
      const size_t n = j - i;
      if (static_cast<double>(n) >= kMinChainKernels) {
        int64_t total = 0, longest = 0;
        Signature sig{};
        sig.n = static_cast<uint32_t>(n);
        for (size_t k = i; k < j; ++k) {
          const KernelRec& kr = c.m.kernels[list[k]];
          total += kr.dur;
          longest = std::max<int64_t>(longest, kr.dur);
          if (k - i < sig.ids.size()) {
            const uint32_t op = c.op_of_corr(kr.corr);
            sig.ids[k - i] = op == kNone ? (uint64_t{1} << 32) | kr.name : c.m.ops[op].name;
          }
        }
        const double s = static_cast<double>(total - longest);
        ++chains;
        chained += static_cast<int64_t>(n);
        chain_time += total;
        auto& acc = by_sig[sig];
        acc.saved += total - longest;
        acc.count += 1;
        acc.time += total;
        const KernelRec& first = c.m.kernels[list[i]];
        if (best.size() < 3 || s > best.back().saving) {
          best.push_back({s, {first.start, c.m.kernels[list[j - 1]].end(), std::to_string(n) + "-kernel memory-bound chain"}});
          std::sort(best.begin(), best.end(), [](const Best& a, const Best& b) { return a.saving > b.saving; });
          if (best.size() > 3) best.pop_back();
        }
      }
      i = j;
    }
  }
  const double saving = static_cast<double>(memory_bound) * (1 - 1 / kCompileSpeedup);
  if (chains == 0 || static_cast<double>(chain_time) < kMinChainedShare * static_cast<double>(memory_bound) ||
      c.pct_of_step(static_cast<int64_t>(saving)) < kMinSavingPct)
    return std::nullopt;
  Finding f = make_finding(kFusionRule, c, saving);
  const double chains_per_step = static_cast<double>(chains) / c.n_steps;
  const double chain_length = static_cast<double>(chained) / static_cast<double>(chains);
  f.evidence.summary = "Memory-bound ATen kernels (pointwise, norms, reductions, casts) take " +
                       ms(c.ms_per_step(memory_bound)) + " per step, " + format_fixed(chains_per_step, 1) +
                       " chains of " + format_fixed(chain_length, 1) +
                       " kernels on average among them; the rule alone takes compiled code to run them about " +
                       format_fixed(kCompileSpeedup, 1) + "x faster (the what-if replay, where it runs, prices the fix).";
  f.evidence.metrics = {
      {"memory_bound_ms_per_step", c.ms_per_step(memory_bound), "ms"},
      {"assumed_speedup", kCompileSpeedup, "x"},
      {"chains_per_step", chains_per_step, "count"},
      {"chained_kernels_per_step", static_cast<double>(chained) / c.n_steps, "count"},
      {"chain_kernel_ms_per_step", c.ms_per_step(chain_time), "ms"},
  };
  Tally sig;
  for (const auto& [key, acc] : by_sig) {
    std::string ops;
    for (size_t k = 0; k < key.ids.size() && k < key.n; ++k) {
      const uint64_t id = key.ids[k];
      ops += (ops.empty() ? "" : " > ") +
             ((id >> 32) ? short_kernel_name(c.m.str(static_cast<uint32_t>(id))).substr(0, 60) : c.name(static_cast<uint32_t>(id)));
    }
    if (key.n > key.ids.size()) ops += " > ... (" + std::to_string(key.n) + " kernels)";
    sig.add(ops, acc.saved, acc.count,
            std::to_string(key.n) + " kernels, " + ns_text(static_cast<double>(acc.time) / static_cast<double>(acc.count)) + " per chain");
  }
  f.evidence.top = sig.top(5);
  for (const auto& b : best) f.evidence.ranges.push_back(b.range);
  for (int64_t& t : per_step) t = static_cast<int64_t>(static_cast<double>(t) * (1 - 1 / kCompileSpeedup));
  auto worst = worst_steps(c, per_step, 2, "saved by fusing");
  f.evidence.ranges.insert(f.evidence.ranges.end(), worst.begin(), worst.end());
  f.fix.text = "Compile the model (or the hot function) with torch.compile: TorchInductor fuses chains of "
               "pointwise ops, norms and reductions into Triton kernels that read their inputs and write their "
               "output once.";
  f.fix.code =
      "model = torch.compile(model)\n"
      "\n"
      "# or only the function with the pointwise chain:\n"
      "@torch.compile\n"
      "def bias_gelu_scale(x, bias, scale):\n"
      "    return torch.nn.functional.gelu(x + bias) * scale\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
