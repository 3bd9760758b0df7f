// The fixes as graph transforms. Every speed factor comes from the calibration
// table (calibration.h); the fallbacks here are used only by a table that
// lacks the entry, and are the generic table's values.
#include "analyzer/whatif/fixes.h"

#include <algorithm>
#include <unordered_map>
#include <array>
#include <cmath>

#include "analyzer/context.h"

namespace gpuscope::analyzer::whatif {
namespace {

// DataLoader workers the fix suggests; a worker produces a batch in the time
// the main process took, so the wait shrinks to that over the workers.
constexpr double kWorkers = 8;
// A job "already" uses a precision or layout when this share of its
// matmul/conv time does.
constexpr double kAlreadyShare = 0.5;
// Below this share of GPU time a fix's kernels are too few to matter.
constexpr double kMinShare = 0.03;
// torch.compile: the shortest chain of memory-bound kernels counted as fused.
// Pairs are not: on real models measured on the H100 and H200 (bf16 GEMM MLPs,
// BERT, an MLP sample) compile saved 0-4 % where counting pairs predicted 6-13 %.
constexpr size_t kMinChain = 3;
// ... holding at least this many kernels that are not copies or casts: a run
// of autocast's weight casts moves other tensors' bytes, which fusing does not save.
constexpr size_t kMinChainWork = 3;
// CUDA graphs: a stretch between host waits is worth capturing when it holds
// this share of the step's launches.
constexpr double kMinCapturedShare = 0.1;
// torch.compile: a fused chain takes at least this share of its largest eager
// pass (it still reads the chain's inputs and writes its outputs once).
constexpr double kFusedPassShare = 1.0;
// A matmul call of at least this many flops runs at its kernels' throughput (a
// smaller one is bound by launch and latency, which padding does not change).
constexpr double kThroughputBoundFlops = 1e9;

double us(double ns) { return ns / 1000; }

bool is_matmul(Kind k) {
  return k == Kind::kGemmFp32 || k == Kind::kGemmTf32 || k == Kind::kGemmHalf || k == Kind::kConv ||
         k == Kind::kConvHalf || k == Kind::kAttention;
}

struct Totals {
  double gpu = 0, matmul = 0, half_matmul = 0, conv = 0, transpose = 0, optimizer = 0, fused_optimizer = 0;
  int64_t triton = 0, kernels = 0;
};

Totals totals(const Graph& g) {
  Totals t;
  for (const GpuTask& k : g.gpu) {
    if (k.removed) continue;
    t.gpu += k.dur;
    if (k.kind != Kind::kCopy && k.kind != Kind::kMemset) ++t.kernels;
    if (is_matmul(k.kind)) {
      t.matmul += k.dur;
      if (k.kind == Kind::kGemmHalf || k.kind == Kind::kConvHalf || (k.kind == Kind::kAttention && k.half))
        t.half_matmul += k.dur;
    }
    if (k.kind == Kind::kConv || k.kind == Kind::kConvHalf) t.conv += k.dur;
    if (k.kind == Kind::kTranspose) t.transpose += k.dur;
    if (k.kind == Kind::kOptimizer) t.optimizer += k.dur;
    if (k.kind == Kind::kFusedOptimizer) t.fused_optimizer += k.dur;
    if (k.kind == Kind::kTriton) ++t.triton;
  }
  return t;
}

// Removes a task; the call that launched it costs nothing once it launches nothing.
void remove_task(Graph& g, uint32_t x) {
  g.gpu[x].removed = true;
  CpuTask& c = g.cpu[g.gpu[x].cpu];
  for (uint32_t i = c.gpu_begin; i < c.gpu_end; ++i)
    if (!g.gpu[i].removed) return;
  if (c.type == CpuType::kLaunch) {
    c.dur = 0;
    c.gap = 0;
  }
}

// ------------------------------------------------------------------ amp

std::string amp_why_not(const Graph& g, const JobTraits& t) {
  if (t.bf16) return "already: most matmul and convolution time is in bf16/fp16 kernels";
  const Totals s = totals(g);
  if (s.matmul < kMinShare * s.gpu) return "matmuls and convolutions are under 3 % of GPU time";
  return "";
}

// The transform: amp_fix.cpp.


// ---------------------------------------------------------- channels-last

std::string channels_last_why_not(const Graph& g, const JobTraits& t) {
  if (!t.has_convolutions) return "no convolutions worth converting";
  if (t.channels_last) return "already: the convolutions run without NCHW/NHWC transposes";
  (void)g;
  return "";
}

// ATen's CUDA group norm makes its input contiguous (NCHW) and returns NCHW,
// whatever the model's layout: a channels_last convolution next to one still
// converts its input (forward) or its incoming gradient (backward), by ATen's
// copies instead of cuDNN's transposes. The transposes whose nearest norm
// kernel, before or after them in launch order, is a group norm's stay.
std::vector<bool> beside_group_norm(const Graph& g) {
  std::vector<bool> keep(g.gpu.size(), false);
  auto is_norm = [](Kind k) { return k == Kind::kBatchNorm || k == Kind::kGroupNorm || k == Kind::kLayerNorm; };
  auto sweep = [&](auto begin, auto end) {
    Kind last = Kind::kOther;
    for (auto x = begin; x != end; ++x) {
      const GpuTask& k = g.gpu[*x];
      if (k.removed) continue;
      if (is_norm(k.kind)) last = k.kind;
      if (k.kind == Kind::kTranspose && last == Kind::kGroupNorm) keep[*x] = true;
    }
  };
  std::vector<uint32_t> order(g.gpu.size());
  for (uint32_t x = 0; x < order.size(); ++x) order[x] = x;
  sweep(order.begin(), order.end());
  sweep(order.rbegin(), order.rend());
  return keep;
}

// The NCHW -> NHWC layout: cuDNN's transposes go, convolutions and batch norm
// run at their NHWC speed; group norm too when ATen's NHWC kernel runs it
// (channels_last; then the transposes beside it stay), not when compiled code
// does (torch.compile's layout).
void to_nhwc(Graph& g, const Calibration& cal, Bound b, bool aten_group_norm) {
  const std::vector<bool> keep = aten_group_norm ? beside_group_norm(g) : std::vector<bool>(g.gpu.size(), false);
  for (uint32_t x = 0; x < g.gpu.size(); ++x) {
    GpuTask& k = g.gpu[x];
    if (k.removed) continue;
    const double t = us(k.dur);
    switch (k.kind) {
      case Kind::kConv: k.dur *= cal.ratio("conv_nchw_to_nhwc_fp32", t, b, 0.9); break;
      case Kind::kConvHalf: k.dur *= cal.ratio("conv_nchw_to_nhwc_bf16", t, b, 0.85); break;
      case Kind::kTranspose:
        if (!keep[x]) remove_task(g, x);
        break;
      case Kind::kBatchNorm: k.dur *= cal.ratio("batchnorm_nchw_to_nhwc", t, b, 0.8); break;
      case Kind::kGroupNorm:
        if (aten_group_norm) k.dur *= cal.ratio("groupnorm_nchw_to_nhwc", t, b, 1.5);
        break;
      default: break;
    }
  }
}

void channels_last_apply(Graph& g, const JobTraits&, const Calibration& cal, Bound b) { to_nhwc(g, cal, b, true); }

// -------------------------------------------------------- fused-optimizer

std::string fused_optimizer_why_not(const Graph& g, const JobTraits& t) {
  if (t.fused_optimizer) return "already: the optimizer runs fused";
  const Totals s = totals(g);
  if (s.optimizer <= 0) return "no foreach optimizer kernels to merge";
  return "";
}

void fused_optimizer_apply(Graph& g, const JobTraits&, const Calibration& cal, Bound b) {
  const double keep = std::clamp(cal.cost("fused_to_foreach_launches", 0.15, b), 0.01, 1.0);
  const auto every = static_cast<size_t>(std::max(1.0, std::round(1 / keep)));
  // ~20 us of foreach AdamW GPU time per million parameters (~60 bytes moved per
  // parameter at ~3 TB/s): only to pick the curve's point.
  double opt_ns = 0;
  for (const GpuTask& k : g.gpu)
    if (!k.removed && k.kind == Kind::kOptimizer) opt_ns += k.dur;
  const double mparams = std::max(0.1, us(opt_ns) / std::max(1, g.steps) / 20.0);
  const double ratio = cal.ratio("optimizer_fused", mparams, b, 0.6);
  std::vector<uint32_t> group;
  auto flush = [&] {
    if (group.empty()) return;
    double total = 0;
    for (uint32_t x : group) total += g.gpu[x].dur;
    const size_t kept = (group.size() + every - 1) / every;
    for (size_t i = 0; i < group.size(); ++i) {
      GpuTask& k = g.gpu[group[i]];
      if (i % every == 0) {
        k.dur = total * ratio / static_cast<double>(kept);
        k.kind = Kind::kFusedOptimizer;
      } else {
        remove_task(g, group[i]);
      }
    }
    group.clear();
  };
  uint32_t step = UINT32_MAX;
  for (uint32_t x = 0; x < g.gpu.size(); ++x) {
    const GpuTask& k = g.gpu[x];
    if (k.removed || k.kind != Kind::kOptimizer) continue;
    if (g.cpu[k.cpu].step != step) flush(), step = g.cpu[k.cpu].step;
    group.push_back(x);
  }
  flush();
}

// ---------------------------------------------------------------- compile

// Copies and casts (autocast's weight casts, .float(), .contiguous()).
bool is_copy(const Graph& g, const GpuTask& k) {
  if (k.kind != Kind::kMemoryBound || !g.names || k.name >= g.names->size()) return false;
  const std::string_view name = (*g.names)[k.name];
  return name.find("copy_kernel") != std::string_view::npos || name.find("CatArrayBatchedCopy") != std::string_view::npos;
}

bool is_spatial_norm(Kind k) { return k == Kind::kBatchNorm || k == Kind::kGroupNorm; }

// cuDNN's NCHW <-> NHWC transposes are not: they run inside the convolution's
// call, which inductor leaves to cuDNN (they go only with the layout).
bool fusible(Kind k) {
  return k == Kind::kMemoryBound || k == Kind::kBatchNorm || k == Kind::kGroupNorm || k == Kind::kLayerNorm;
}

std::string compile_why_not(const Graph&, const JobTraits& t) {
  if (t.compiled) return "already: torch.compile is at work";
  if (t.cuda_graphs) return "already: the step is replayed from CUDA graphs";
  return "";
}

// Without the convolutions' shapes: a graph holding depthwise (grouped)
// convolutions is taken to stay NCHW.
bool has_depthwise_convolutions(const Graph& g) {
  if (!g.names) return false;
  for (const GpuTask& k : g.gpu)
    if (!k.removed && (k.kind == Kind::kConv || k.kind == Kind::kConvHalf) && k.name < g.names->size() &&
        (*g.names)[k.name].find("depthwise") != std::string_view::npos)
      return true;
  return false;
}

bool is_gemm(Kind k) { return k == Kind::kGemmFp32 || k == Kind::kGemmTf32 || k == Kind::kGemmHalf; }

// cuBLAS's tensor-core kernels for 2-byte operands off its alignment name it
// ("cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_nn_align1"): the backward
// GEMMs of a misaligned matmul, whose autograd nodes carry no shapes. (Its fp32
// SIMT kernels say align1 whatever the shapes.)
bool misaligned_kernel_name(const Graph& g, const GpuTask& k) {
  if (!g.names || k.name >= g.names->size()) return false;
  const std::string_view n = (*g.names)[k.name];
  if (n.find("tensorop") == std::string_view::npos || n.find("f32_s1688") != std::string_view::npos) return false;
  return (k.half || k.kind == Kind::kGemmHalf) &&
         (n.find("_align1") != std::string_view::npos || n.find("_align2") != std::string_view::npos ||
          n.find("_align4") != std::string_view::npos);
}

// Inductor pads a matmul whose M, N or K is off cuBLAS's alignment (its pad_mm
// pass, on by default, keeps the padding where it benchmarks faster: a GPT's
// vocabulary of 50257), and cuBLAS then runs its aligned kernels. They run at
// the throughput of the job's own aligned matmuls, measured on its forward
// matmul ops (flops from their recorded shapes); without both kinds of forward
// matmul op the kernels keep their time.
void pad_misaligned_gemms(Graph& g, Bound b) {
  struct Call {
    double flops = 0, ns = 0;
    bool misaligned = false;
  };
  std::unordered_map<uint32_t, Call> calls;  // forward matmul op call -> its GEMM kernels
  for (const GpuTask& k : g.gpu)
    if (!k.removed && is_gemm(k.kind) && !k.backward && k.flops > 0 && k.op != UINT32_MAX) {
      Call& c = calls[k.op];
      c.flops = k.flops, c.ns += k.dur, c.misaligned = k.misaligned;
    }
  double flops[2] = {0, 0}, ns[2] = {0, 0};
  for (const auto& [op, c] : calls)
    if (c.flops >= kThroughputBoundFlops) flops[c.misaligned] += c.flops, ns[c.misaligned] += c.ns;
  if (ns[0] <= 0 || ns[1] <= 0 || flops[0] <= 0 || flops[1] <= 0) return;
  const double ratio = std::clamp((flops[1] / ns[1]) / (flops[0] / ns[0]), 0.1, 1.0);
  if (ratio >= 1) return;
  // The high bound keeps half the gain (pad_mm's benchmark may keep some unpadded).
  const double r = b == Bound::kHi ? (1 + ratio) / 2 : ratio;
  for (GpuTask& k : g.gpu)
    if (!k.removed && is_gemm(k.kind) &&
        (k.backward ? misaligned_kernel_name(g, k)
                  : k.misaligned && calls.count(k.op) > 0 && calls[k.op].flops >= kThroughputBoundFlops))
      k.dur *= r;
}

void compile_apply(Graph& g, const JobTraits& t, const Calibration& cal, Bound b) {
  pad_misaligned_gemms(g, b);
  // Inductor's layout optimization: a graph of (non-grouped) convolutions is
  // compiled channels-last. Its normalizations are its own generated kernels:
  // batch norm counted at cuDNN's NHWC speed (both read the tensor twice and
  // write it once), group norm as it ran (ATen's slower NHWC kernel is not
  // what runs).
  const bool layout_opt = t.inductor_layout == LayoutOpt::kUnknown ? !has_depthwise_convolutions(g)
                                                                    : t.inductor_layout == LayoutOpt::kYes;
  if (t.has_convolutions && !t.channels_last && layout_opt) to_nhwc(g, cal, b, false);
  // Chains of memory-bound kernels between matmuls, per stream, in launch order,
  // outside the optimizer (compiling the model leaves optimizer.step eager),
  // ended by a host wait or a graph break.
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> open;  // stream -> chain
  auto close = [&](std::vector<uint32_t>& chain) {
    size_t work = 0;  // kernels in the chain that are not copies
    for (uint32_t x : chain) work += !is_copy(g, g.gpu[x]);
    if (chain.size() >= kMinChain && work >= kMinChainWork) {
      // Batch and group norm statistics are reductions across samples or
      // space that fused code still makes in passes of their own: only the
      // pointwise kernels around them (ReLU, residual add, their backward)
      // fold in. LayerNorm reduces within a row, in one pass like a pointwise
      // kernel's, and fuses with its neighbours.
      // A fused kernel moves the chain's bytes once: it reads what the chain
      // reads from outside and writes what it leaves behind, which is the
      // traffic of its largest pass (each eager kernel of the chain streamed a
      // tensor of its own in and out at the same bandwidth); a chain of many
      // small kernels costs the generated kernel's floor per pass it still makes.
      double norms = 0, largest = 0, pointwise = 0;
      size_t passes = 0;
      for (uint32_t x : chain) {
        const GpuTask& k = g.gpu[x];
        if (is_spatial_norm(k.kind)) {
          norms += k.dur;
          continue;
        }
        pointwise += k.dur;
        largest = std::max(largest, k.dur);
        ++passes;
      }
      // The measured chain-fusion curve (equal kernels on one tensor) bounds
      // how far below the largest pass the chain can go: its ratio at the
      // chain's length times the chain's time.
      const double by_curve =
          pointwise * cal.ratio("chain_fusion", std::min<double>(static_cast<double>(passes), 8), b, 0.5);
      const double fused = std::min(pointwise, std::max(largest * kFusedPassShare, by_curve));
      g.gpu[chain[0]].dur = norms + fused;
      g.gpu[chain[0]].kind = Kind::kTriton;
      for (size_t i = 1; i < chain.size(); ++i) remove_task(g, chain[i]);
    }
    chain.clear();
  };
  auto chain_of = [&](uint32_t stream) -> std::vector<uint32_t>& {
    for (auto& [s, c] : open)
      if (s == stream) return c;
    open.push_back({stream, {}});
    return open.back().second;
  };
  // A host wait ends every chain: compiled code cannot run across a .item().
  std::vector<uint32_t> waits_before(g.cpu.size() + 1, 0);
  for (size_t i = 0; i < g.cpu.size(); ++i) waits_before[i + 1] = waits_before[i] + (g.cpu[i].type == CpuType::kBlocking);
  uint32_t step = UINT32_MAX, waits = 0;
  for (uint32_t x = 0; x < g.gpu.size(); ++x) {
    GpuTask& k = g.gpu[x];
    if (k.removed) continue;
    const uint32_t s = g.cpu[k.cpu].step;
    if (s != step || waits_before[k.cpu] != waits) {
      for (auto& [st, c] : open) close(c);
      step = s;
      waits = waits_before[k.cpu];
    }
    if (k.graph_break) {  // the op runs eagerly between two compiled graphs
      for (auto& [st, c] : open) close(c);
      continue;
    }
    auto& chain = chain_of(k.stream);
    // Copies and casts (autocast's weight casts, .float()) move other tensors'
    // bytes: fusing them saves a launch, not the bytes a chain on one tensor saves.
    if (!k.optimizer && fusible(k.kind))
      chain.push_back(x);
    else
      close(chain);
  }
  for (auto& [st, c] : open) close(c);
  // The kernels it fused away are launched no more; each one left costs what
  // a compiled function's launch costs the CPU (its generated Python wrapper
  // and launcher: ~19 us a kernel measured on the H100, more than an eager
  // op's ~10 us), in place of the eager dispatch before it. Ops dynamo cannot
  // trace (cuDNN's RNN, data-dependent shapes) and the optimizer stay eager
  // calls; each return from eager code into a compiled graph costs a compiled
  // function's call.
  const double per_kernel = cal.cost("compiled_kernel_cpu_us", 19, b) * 1e3;
  const double per_graph = cal.cost("compiled_call_cpu_us", 28, b) * 1e3;
  bool in_break = false;
  uint32_t cpu_step = UINT32_MAX, last_op = UINT32_MAX;
  for (CpuTask& c : g.cpu) {
    if (c.step != cpu_step) cpu_step = c.step, in_break = false;
    if (c.type != CpuType::kLaunch || c.optimizer || c.gpu_begin == c.gpu_end) continue;
    const GpuTask& first = g.gpu[c.gpu_begin];
    // A library's second and later launches inside one op (cuBLAS, cuDNN) had
    // no dispatch before them to replace.
    const bool same_op = first.op != UINT32_MAX && first.op == last_op;
    last_op = first.op;
    if (first.graph_break || first.kind == Kind::kRnn) {
      in_break = true;
      continue;
    }
    // Memsets, copies and other library work keep the eager dispatch they had.
    const bool generated = first.kind == Kind::kTriton || is_matmul(first.kind);
    if (first.removed || same_op || !generated) continue;
    if (c.gap < static_cast<double>(kDispatchGapNs)) c.gap = std::max(0.0, per_kernel - c.dur);
    if (in_break) c.gap += per_graph, in_break = false;
  }
  g.compiled_by_fix = true;
}

// ------------------------------------------------------------ cuda-graphs

std::string cuda_graphs_why_not(const Graph&, const JobTraits& t) {
  if (t.cuda_graphs) return "already: the step is replayed from CUDA graphs";
  if (!t.stable_shapes) return "the steps launch different kernels (shapes change), which a captured graph cannot replay";
  return "";
}

void cuda_graphs_apply(Graph& g, const JobTraits&, const Calibration& cal, Bound b) {
  const double launch = cal.cost("graph_launch_cpu_us", 10, b) * 1e3;
  g.gpu_gap = std::min(g.gpu_gap, cal.cost("graph_node_gpu_us", 1.0, b) * 1e3);
  // A graph holds work between two host waits. A user captures the stretches
  // that hold most of a step's launches (forward, backward, optimizer) and
  // leaves the short ones around each .item() eager: one replay per captured
  // stretch, no Python between its kernels. Longer CPU work inside a stretch
  // (a Dataset, a logging call) stays where it was, as does the CPU work
  // before the stretch's first launch.
  struct Region {
    size_t first, last;  // CPU task indices, inclusive
    size_t launches = 0;
  };
  std::vector<Region> regions;
  std::vector<size_t> launches_per_step(static_cast<size_t>(std::max(1, g.steps)), 0);
  uint32_t step = UINT32_MAX;
  for (size_t i = 0; i < g.cpu.size(); ++i) {
    const CpuTask& c = g.cpu[i];
    // After torch.compile, graphs hold what dynamo compiled: an eager op between
    // two graphs (a graph break) ends a captured stretch and stays eager.
    const bool eager_break = g.compiled_by_fix && c.gpu_begin < c.gpu_end && g.gpu[c.gpu_begin].graph_break;
    const bool split = c.step != step || c.type == CpuType::kBlocking || eager_break;
    step = c.step;
    if (split || regions.empty()) regions.push_back({i, i, 0});
    regions.back().last = i;
    if (c.type == CpuType::kLaunch) {
      ++regions.back().launches;
      if (c.step < launches_per_step.size()) ++launches_per_step[c.step];
    }
  }
  for (const Region& r : regions) {
    const size_t step_launches = launches_per_step[std::min<size_t>(g.cpu[r.first].step, launches_per_step.size() - 1)];
    if (r.launches < 2 || static_cast<double>(r.launches) < kMinCapturedShare * static_cast<double>(step_launches)) continue;
    bool first = true;
    for (size_t i = r.first; i <= r.last; ++i) {
      CpuTask& c = g.cpu[i];
      if (c.type == CpuType::kBlocking) continue;
      if (g.compiled_by_fix && c.gpu_begin < c.gpu_end && g.gpu[c.gpu_begin].graph_break) continue;
      if (first) {
        if (c.type != CpuType::kLaunch) continue;  // CPU work before the stretch's first launch stays
        c.gap += launch;
        c.dur = 0;
        first = false;
        continue;
      }
      if (c.gap < static_cast<double>(kDispatchGapNs)) c.gap = 0;
      c.dur = 0;
    }
  }
}

// -------------------------------------------------------------- host-sync

std::string host_sync_why_not(const Graph&, const JobTraits& t) {
  if (t.scalar_reads == 0) return "no reads of a few bytes back (.item()) that wait for the GPU";
  return "";
}

void host_sync_apply(Graph& g, const JobTraits&, const Calibration&, Bound) {
  // The values stay on the GPU: no copy back, no wait, no Python float.
  for (size_t i = 0; i < g.cpu.size(); ++i) {
    CpuTask& c = g.cpu[i];
    if (c.type != CpuType::kBlocking || !c.scalar_read) continue;
    c.type = CpuType::kOther;
    c.dur = 0;
    for (uint32_t x = c.gpu_begin; x < c.gpu_end; ++x) remove_task(g, x);
    if (i > 0 && g.cpu[i - 1].type == CpuType::kLaunch) {
      CpuTask& copy = g.cpu[i - 1];
      for (uint32_t x = copy.gpu_begin; x < copy.gpu_end; ++x)
        if (g.gpu[x].kind == Kind::kCopy && g.gpu[x].bytes <= kScalarReadBytes) remove_task(g, x);
    }
  }
}

// ------------------------------------------------------- dataloader-stall

std::string dataloader_why_not(const Graph&, const JobTraits& t) {
  if (t.data_wait_share < 0.02) return "the job waits for data under 2 % of the step";
  return "";
}

void dataloader_apply(Graph& g, const JobTraits&, const Calibration& cal, Bound b) {
  const double next = cal.cost("dataloader_next_us", 150, b) * 1e3;
  for (CpuTask& c : g.cpu)
    if (c.data > 0) c.data = std::max(std::min(c.data, next), c.data / kWorkers);
}

// ------------------------------------------------------- pageable-memcpy

std::string pageable_why_not(const Graph&, const JobTraits& t) {
  if (t.pageable_copies == 0) return "no copies from pageable memory";
  return "";
}

void pageable_apply(Graph& g, const JobTraits&, const Calibration& cal, Bound b) {
  const double gbps = cal.cost("pinned_h2d_gbps", 25, b == Bound::kLo ? Bound::kHi : b == Bound::kHi ? Bound::kLo : b);
  for (CpuTask& c : g.cpu) {
    bool pageable = false;
    for (uint32_t x = c.gpu_begin; x < c.gpu_end; ++x) {
      GpuTask& k = g.gpu[x];
      if (k.removed || !k.pageable || k.kind != Kind::kCopy) continue;
      k.dur = std::min(k.dur, static_cast<double>(k.bytes) / gbps);  // bytes / (GB/s) = ns
      pageable = true;
    }
    if (!pageable) continue;
    // A pinned, non_blocking copy is queued and the call returns.
    c.type = CpuType::kLaunch;
    c.dur = std::min(c.dur, 10'000.0);
  }
}

constexpr std::array kFixes{
    Fix{"amp", "bf16 autocast",
        "with torch.autocast(\"cuda\", dtype=torch.bfloat16):\n    loss = loss_fn(model(x), y)",
        amp_why_not, amp_apply},
    Fix{"channels-last", "channels_last memory format",
        "model = model.to(memory_format=torch.channels_last)\nx = x.to(memory_format=torch.channels_last)",
        channels_last_why_not, channels_last_apply},
    Fix{"fused-optimizer", "fused optimizer",
        "optimizer = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)", fused_optimizer_why_not,
        fused_optimizer_apply},
    Fix{"compile", "torch.compile", "model = torch.compile(model)", compile_why_not, compile_apply},
    Fix{"cuda-graphs", "CUDA graphs",
        "# capture forward, backward and optimizer.step once (optimizer with capturable=True), then replay:\n"
        "g = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    loss = loss_fn(model(static_x), static_y)\n"
        "    loss.backward()\n    optimizer.step()\n# each step: static_x.copy_(x); static_y.copy_(y); g.replay()\n"
        "# or: model = torch.compile(model, mode=\"reduce-overhead\")",
        cuda_graphs_why_not, cuda_graphs_apply},
    Fix{"host-sync", "no per-step host sync",
        "# keep values on the GPU and read them back every N steps:\nlosses.append(loss.detach())\n"
        "if step % 100 == 0:\n    print(torch.stack(losses).mean().item()); losses.clear()",
        host_sync_why_not, host_sync_apply},
    Fix{"dataloader-stall", "DataLoader workers",
        "loader = DataLoader(dataset, batch_size=bs, num_workers=8, pin_memory=True, persistent_workers=True)",
        dataloader_why_not, dataloader_apply},
    Fix{"pageable-memcpy", "pinned copies",
        "x = x.pin_memory()  # or DataLoader(..., pin_memory=True)\nx = x.to(\"cuda\", non_blocking=True)",
        pageable_why_not, pageable_apply},
};

}  // namespace

JobTraits job_traits(const Graph& g, bool torch_compile_seen) {
  JobTraits t;
  const Totals s = totals(g);
  t.bf16 = s.matmul > 0 && s.half_matmul >= kAlreadyShare * s.matmul;
  t.has_convolutions = s.conv >= kMinShare * s.gpu && s.conv > 0;
  t.channels_last = t.has_convolutions && s.transpose < 0.03 * s.conv;
  t.compiled = torch_compile_seen || (s.kernels > 0 && static_cast<double>(s.triton) >= 0.1 * static_cast<double>(s.kernels));
  t.fused_optimizer = s.fused_optimizer > 0;
  double data = 0, step_ns = g.traced_step_ms * 1e6 * g.steps;
  for (const CpuTask& c : g.cpu) {
    data += c.data;
    if (c.graph_launch) t.cuda_graphs = true;
    if (c.type == CpuType::kBlocking && c.scalar_read) ++t.scalar_reads;
  }
  for (const GpuTask& k : g.gpu)
    if (k.pageable && k.kind == Kind::kCopy) ++t.pageable_copies;
  t.data_wait_share = step_ns > 0 ? data / step_ns : 0;
  if (g.steps > 0) {
    t.scalar_reads = (t.scalar_reads + g.steps - 1) / g.steps;
    t.pageable_copies = (t.pageable_copies + g.steps - 1) / g.steps;
  }
  if (!g.kernels_per_step.empty()) {
    const auto [lo, hi] = std::minmax_element(g.kernels_per_step.begin(), g.kernels_per_step.end());
    t.stable_shapes = *lo > 0 && static_cast<double>(*hi) <= 1.05 * static_cast<double>(*lo);
  }
  return t;
}

std::span<const Fix> all_fixes() { return kFixes; }

const Fix* find_fix(std::string_view id) {
  for (const Fix& f : kFixes)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace gpuscope::analyzer::whatif
