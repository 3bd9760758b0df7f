#include "analyzer/whatif/step_graph.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "analyzer/steps.h"

namespace gpuscope::analyzer::whatif {
namespace {

// A GPU task that started this much later than its launch and its stream
// allowed waited for something else: an event recorded on another stream.
constexpr int64_t kWaitSlackNs = 20'000;
// Queued gaps needed before their median stands for the GPU's own gap.
constexpr size_t kMinQueuedGaps = 20;
// A launch call longer than this, and than kQueueFullFactor times the median
// launch, waited for room in the launch queue.
constexpr double kQueueFullNs = 40'000;
constexpr double kQueueFullFactor = 5;

// The analysed steps to replay: those of the preferred kind (no ops recorded,
// where such steps exist) in contiguous runs, longest runs first, at most
// `max_steps`, kept in time order.
std::vector<size_t> pick_steps(const Context& c, size_t max_steps) {
  const size_t n = c.steps.size();
  size_t kernels_only = 0;
  for (size_t i = 0; i < n && i < c.step_ops.size(); ++i) kernels_only += c.step_ops[i] == 1;
  auto wanted = [&](size_t i) { return kernels_only < 3 || (i < c.step_ops.size() && c.step_ops[i] == 1); };
  std::vector<std::pair<size_t, size_t>> runs;  // [first, last]
  for (size_t i = 0; i < n; ++i) {
    if (!wanted(i)) continue;
    if (!runs.empty() && runs.back().second + 1 == i && c.steps[i - 1].end <= c.steps[i].start + 1)
      runs.back().second = i;
    else
      runs.push_back({i, i});
  }
  std::stable_sort(runs.begin(), runs.end(),
                   [](const auto& a, const auto& b) { return a.second - a.first > b.second - b.first; });
  std::vector<size_t> out;
  for (auto [a, b] : runs) {
    if (out.size() >= max_steps) break;
    const size_t take = std::min(b - a + 1, max_steps - out.size());
    const size_t from = a + (b - a + 1 - take) / 2;  // the middle of a long run
    for (size_t i = from; i < from + take; ++i) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

enum class OpContext { kNone, kOptimizer, kRnn, kBatchNorm, kGroupNorm, kLayerNorm };

// What the op that launched a kernel belongs to: the optimizer's step, or an
// RNN (cuDNN runs its own GEMMs inside nn.LSTM, which bf16 does not speed up
// as it does a Linear's). Ops are recorded in some steps and placed by
// position in the others, so most kernels have one.
OpContext op_context(const Model& m, uint32_t corr) {
  uint32_t op = m.op_by_corr.find(corr);
  for (int depth = 0; op != kNone && op < m.ops.size() && depth < 32; ++depth) {
    const std::string_view name = m.str(m.ops[op].name);
    if (name.starts_with("Optimizer.step") || name.find("_fused_adam") != std::string_view::npos) return OpContext::kOptimizer;
    if (name.find("_cudnn_rnn") != std::string_view::npos || name.find("aten::lstm") != std::string_view::npos ||
        name.find("aten::gru") != std::string_view::npos || name.find("aten::rnn_") != std::string_view::npos)
      return OpContext::kRnn;
    // Every kernel of a norm (its statistics, its pointwise apply, its
    // backward) is the norm's: the calibration times the op's kernels together.
    if (name.find("group_norm") != std::string_view::npos || name.find("GroupNorm") != std::string_view::npos)
      return OpContext::kGroupNorm;
    if (name.find("batch_norm") != std::string_view::npos || name.find("BatchNorm") != std::string_view::npos)
      return OpContext::kBatchNorm;
    if (name.find("layer_norm") != std::string_view::npos || name.find("LayerNorm") != std::string_view::npos)
      return OpContext::kLayerNorm;
    op = op < m.op_parent.size() ? m.op_parent[op] : kNone;
  }
  return OpContext::kNone;
}

// The innermost op that launched the kernel took bf16/fp16 tensors (the op
// after autocast's cast: aten::mm, aten::addmm, aten::convolution).
bool half_op(const Model& m, uint32_t corr) {
  const uint32_t op = m.op_by_corr.find(corr);
  if (op == kNone || op >= m.ops.size() || m.ops[op].dtypes == kNone) return false;
  const std::string_view d = m.str(m.ops[op].dtypes);
  return d.find("BFloat16") != std::string_view::npos || d.find("Half") != std::string_view::npos;
}

// Ops dynamo cannot put in a graph: RNN modules (torch._dynamo.config.allow_rnn
// is off by default), ops whose output shape depends on the data
// (capture_dynamic_output_shape_ops is off), reads of a value to the host. Each
// is a graph break: the op runs eagerly between compiled graphs.
bool graph_break_op(std::string_view name) {
  static constexpr std::array<std::string_view, 14> kBreaks = {
      "aten::lstm", "aten::gru", "aten::rnn_tanh", "aten::rnn_relu", "aten::_cudnn_rnn", "aten::nonzero",
      "aten::masked_select", "aten::unique", "aten::_unique2", "aten::unique_consecutive", "aten::item",
      "aten::_local_scalar_dense", "torchvision::nms", "aten::repeat_interleave"};
  if (std::find(kBreaks.begin(), kBreaks.end(), name) != kBreaks.end()) return true;
  return name.find("CudnnRnnBackward") != std::string_view::npos;
}

// Ops (recorded or placed) that started in [from, to): m.ops is by start.
size_t ops_between(const Model& m, int64_t from, int64_t to) {
  auto lo = std::lower_bound(m.ops.begin(), m.ops.end(), from, [](const OpRec& o, int64_t t) { return o.start < t; });
  auto hi = std::lower_bound(lo, m.ops.end(), to, [](const OpRec& o, int64_t t) { return o.start < t; });
  return static_cast<size_t>(hi - lo);
}

// What autocast and dynamo would see of the op that launched a kernel.
struct OpView {
  AmpClass amp = AmpClass::kUnknown;
  bool backward = false, graph_break = false;
  uint32_t op = UINT32_MAX;
  float input_elems = 0, param_elems = 0;
  float flops = 0;
  bool misaligned = false;
};

OpView op_view(const Model& m, uint32_t corr) {
  OpView v;
  uint32_t op = m.op_by_corr.find(corr);
  if (op == kNone || op >= m.ops.size()) return v;
  v.amp = AmpClass::kKeep;
  v.op = op;
  // Innermost to outermost: in backward the autograd node decides (its forward
  // op's class); in forward the outermost op of autocast's lists (aten::linear
  // over aten::addmm, aten::cross_entropy_loss's aten::log_softmax).
  uint32_t decided = kNone;
  for (int depth = 0; op != kNone && op < m.ops.size() && depth < 32; ++depth) {
    const std::string_view name = m.str(m.ops[op].name);
    if (graph_break_op(name)) v.graph_break = true;
    if (!forward_op_of_node(name).empty()) {
      v.backward = true;
      const AmpClass c = amp_class_of_op(name);
      v.amp = c;
      decided = op;
      break;
    }
    if (name.starts_with("autograd::engine")) {
      v.backward = true;
      break;
    }
    const AmpClass c = amp_class_of_op(name);
    if (c != AmpClass::kKeep) v.amp = c, decided = op;
    op = op < m.op_parent.size() ? m.op_parent[op] : kNone;
  }
  if (decided != kNone) {
    v.op = decided;
    const OpRec& r = m.ops[decided];
    if (!v.backward && r.shapes != kNone) {
      const std::string_view shapes = m.str(r.shapes);
      const std::string_view name = m.str(r.name);
      v.input_elems = static_cast<float>(input_elements(shapes, 0));
      if (v.amp == AmpClass::kLower || v.amp == AmpClass::kRnn)
        v.param_elems = static_cast<float>(parameter_elements(name, shapes));
      // A matmul of two activations casts both.
      if (v.amp == AmpClass::kLower && v.param_elems == 0) v.input_elems += static_cast<float>(input_elements(shapes, 1));
      // 2-byte data must be aligned to 8 elements, fp32 to 4 (16 bytes).
      const std::string_view dtypes = r.dtypes != kNone ? m.str(r.dtypes) : std::string_view{};
      const bool two_bytes = dtypes.find("BFloat16") != std::string_view::npos || dtypes.find("Half") != std::string_view::npos;
      const MatmulShape mm = matmul_shape(name, shapes, two_bytes ? 8 : 4);
      v.flops = static_cast<float>(mm.flops);
      v.misaligned = mm.misaligned;
    }
  }
  return v;
}

}  // namespace

Graph build_graph(const Context& c, size_t max_steps) {
  Graph g;
  const Model& m = c.m;
  g.names = m.strings;
  const std::vector<size_t> picked = pick_steps(c, max_steps);
  if (picked.empty()) return g;

  // CPU tasks: the API calls the picked steps' code made (between the step's
  // start on the CPU and the next step's), in time order.
  std::unordered_map<int64_t, StepWindow> cpu_window;
  for (const StepWindow& w : c.plan.cpu_all) cpu_window[w.number] = w;
  std::unordered_map<uint32_t, uint32_t> cpu_of_api;
  std::vector<uint32_t> api_of_cpu;
  double traced_ns = 0;
  int64_t prev_end = INT64_MIN;
  for (size_t k = 0; k < picked.size(); ++k) {
    const StepWindow& st = c.steps[picked[k]];
    auto cw = cpu_window.find(st.number);
    const StepWindow w = cw == cpu_window.end() ? st : cw->second;
    traced_ns += static_cast<double>(st.duration());
    const bool continues = k > 0 && picked[k - 1] + 1 == picked[k];
    if (!continues) prev_end = w.start;
    auto first = std::lower_bound(m.apis.begin(), m.apis.end(), w.start,
                                  [](const ApiRec& a, int64_t t) { return a.start < t; });
    for (auto it = first; it != m.apis.end() && it->start < w.end; ++it) {
      const ApiRec& a = *it;
      const auto index = static_cast<uint32_t>(it - m.apis.begin());
      CpuTask t;
      t.step = static_cast<uint32_t>(k);
      if (a.start > prev_end) {
        t.gap = static_cast<double>(a.start - prev_end);
        t.data = static_cast<double>(c.dataloader.covered(prev_end, a.start));
        t.gap -= t.data;
      }
      t.dur = static_cast<double>(std::max<int64_t>(0, a.end() - std::max(a.start, prev_end)));
      if (a.start > prev_end) t.ops = static_cast<float>(ops_between(m, prev_end, a.start));
      t.type = a.cls == ApiClass::kLaunch ? CpuType::kLaunch : api_blocks_host(a.cls) ? CpuType::kBlocking : CpuType::kOther;
      t.allocator = a.cls == ApiClass::kFree;
      t.graph_launch = is_graph_launch(m.str(a.name));
      cpu_of_api[index] = static_cast<uint32_t>(g.cpu.size());
      api_of_cpu.push_back(index);
      g.cpu.push_back(t);
      prev_end = std::max(prev_end, a.end());
    }
  }
  g.steps = static_cast<int>(picked.size());
  g.traced_step_ms = traced_ns / 1e6 / static_cast<double>(picked.size());

  // GPU tasks: the analysed device's work launched by those calls.
  struct Raw {
    GpuTask t;
    int64_t start, end;
  };
  std::vector<Raw> raw;
  auto add = [&](uint32_t corr, int64_t start, int64_t dur) -> GpuTask* {
    const uint32_t api = m.api_by_corr.find(corr);
    if (api == kNone) return nullptr;
    auto it = cpu_of_api.find(api);
    if (it == cpu_of_api.end()) return nullptr;
    Raw r;
    r.t.cpu = it->second;
    r.t.dur = static_cast<double>(dur);
    r.start = start;
    r.end = start + dur;
    raw.push_back(r);
    return &raw.back().t;
  };
  g.kernels_per_step.assign(picked.size(), 0);
  for (const KernelRec& k : m.kernels) {
    if (k.device != c.device) continue;
    if (GpuTask* t = add(k.corr, k.start, k.dur)) {
      t->stream = k.stream;
      t->name = k.name;
      const std::string_view name = m.str(k.name);
      t->kind = kind_of_kernel(name);
      t->half = half_precision_name(name);
      // A name need not say its data type (cuBLAS's nvjet kernels, cuDNN's):
      // the op that launched it does.
      if (half_op(m, k.corr)) {
        t->half = true;
        if (t->kind == Kind::kGemmFp32 || t->kind == Kind::kGemmTf32) t->kind = Kind::kGemmHalf;
        if (t->kind == Kind::kConv) t->kind = Kind::kConvHalf;
      }
      switch (op_context(m, k.corr)) {
        case OpContext::kOptimizer:
          t->optimizer = true;
          break;
        case OpContext::kRnn:
          if (t->kind != Kind::kMemoryBound) t->kind = Kind::kRnn;  // cuDNN's GEMMs inside an LSTM are the RNN's
          break;
        case OpContext::kBatchNorm:
          if (t->kind == Kind::kMemoryBound) t->kind = Kind::kBatchNorm;
          break;
        case OpContext::kGroupNorm:
          if (t->kind == Kind::kMemoryBound) t->kind = Kind::kGroupNorm;
          break;
        case OpContext::kLayerNorm:
          if (t->kind == Kind::kMemoryBound) t->kind = Kind::kLayerNorm;
          break;
        case OpContext::kNone: break;
      }
      if (t->kind == Kind::kOptimizer || t->kind == Kind::kFusedOptimizer) t->optimizer = true;
      const OpView v = op_view(m, k.corr);
      t->amp = v.amp;
      t->backward = v.backward;
      t->op = v.op;
      t->input_elems = v.input_elems;
      t->param_elems = v.param_elems;
      t->flops = v.flops;
      t->misaligned = v.misaligned;
      t->graph_break = v.graph_break;
      ++g.kernels_per_step[g.cpu[t->cpu].step];
    }
  }
  for (const CopyRec& x : m.copies) {
    if (x.device != c.device) continue;
    if (GpuTask* t = add(x.corr, x.start, x.dur)) {
      t->stream = x.stream;
      t->kind = x.memset ? Kind::kMemset : Kind::kCopy;
      t->bytes = x.bytes;
      t->pageable = !x.memset && (x.src_kind == schema::mem_kind::pageable || x.dst_kind == schema::mem_kind::pageable);
      if (!x.memset && x.copy_kind == schema::copy_kind::DtoH && x.bytes <= kScalarReadBytes)
        g.cpu[t->cpu].scalar_read = true;  // marks the launching call; the wait after it is the .item()
    }
  }
  std::stable_sort(raw.begin(), raw.end(), [](const Raw& a, const Raw& b) {
    return a.t.cpu != b.t.cpu ? a.t.cpu < b.t.cpu : a.start < b.start;
  });

  // Event waits: a task that started well after its launch and its stream
  // allowed waited for the task on another stream that ended just before.
  std::vector<std::pair<int64_t, uint32_t>> by_end;
  by_end.reserve(raw.size());
  for (uint32_t i = 0; i < raw.size(); ++i) by_end.push_back({raw[i].end, i});
  std::sort(by_end.begin(), by_end.end());
  std::unordered_map<uint32_t, int64_t> stream_end;
  std::vector<double> queued;
  std::vector<uint32_t> order(raw.size());
  for (uint32_t i = 0; i < raw.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return raw[a].start < raw[b].start; });
  for (uint32_t i : order) {
    Raw& r = raw[i];
    const ApiRec& launch = m.apis[api_of_cpu[r.t.cpu]];
    auto se = stream_end.find(r.t.stream);
    const int64_t stream_free = se == stream_end.end() ? INT64_MIN : se->second;
    if (stream_free != INT64_MIN && launch.end() <= stream_free && r.start >= stream_free &&
        (r.t.kind != Kind::kCopy && r.t.kind != Kind::kMemset))
      queued.push_back(static_cast<double>(r.start - stream_free));
    const int64_t allowed = std::max(launch.start, stream_free);
    if (r.start > allowed + kWaitSlackNs) {
      auto it = std::upper_bound(by_end.begin(), by_end.end(), std::make_pair(r.start + 2'000, UINT32_MAX));
      while (it != by_end.begin()) {
        --it;
        if (it->first < allowed) break;
        if (raw[it->second].t.stream != r.t.stream) {
          r.t.dep = it->second;  // an index into raw; remapped below
          break;
        }
      }
    }
    stream_end[r.t.stream] = std::max(stream_free, r.end);
  }
  // Indices after the sort by launch: raw is already in that order, so they hold.
  g.gpu.reserve(raw.size());
  for (auto& r : raw) g.gpu.push_back(r.t);
  for (uint32_t i = 0, j = 0; i < g.cpu.size(); ++i) {
    g.cpu[i].gpu_begin = j;
    while (j < g.gpu.size() && g.gpu[j].cpu == i) ++j;
    g.cpu[i].gpu_end = j;
    for (uint32_t x = g.cpu[i].gpu_begin; x < j; ++x)
      if (g.gpu[x].optimizer) g.cpu[i].optimizer = true;
  }
  // A blocking call's own time is what it took after the GPU work it waited for
  // had ended; a scalar read is a blocking call right after (or launching) a small copy back.
  int64_t launched_end = INT64_MIN;
  for (uint32_t i = 0; i < g.cpu.size(); ++i) {
    CpuTask& t = g.cpu[i];
    const ApiRec& a = m.apis[api_of_cpu[i]];
    for (uint32_t x = t.gpu_begin; x < t.gpu_end; ++x)
      launched_end = std::max(launched_end, raw[x].end);
    if (t.type == CpuType::kBlocking) {
      t.dur = static_cast<double>(std::max<int64_t>(0, a.end() - std::max(a.start, launched_end)));
      if (i > 0 && g.cpu[i - 1].scalar_read && g.cpu[i - 1].type != CpuType::kBlocking) t.scalar_read = true;
    }
  }
  for (auto& t : g.cpu)
    if (t.type != CpuType::kBlocking) t.scalar_read = false;
  // A launch that took far longer than launches do waited for room in the
  // GPU's full launch queue (a GPU-bound job's CPU runs that far ahead): that
  // wait is the GPU's pace, not the CPU's cost, and a fix that speeds the GPU
  // removes it. It counts as a typical launch.
  std::vector<double> launch_durs;
  for (const auto& t : g.cpu)
    if (t.type == CpuType::kLaunch && !t.graph_launch) launch_durs.push_back(t.dur);
  if (launch_durs.size() >= kMinQueuedGaps) {
    const double typical = median(launch_durs);
    const double limit = std::max(kQueueFullNs, kQueueFullFactor * typical);
    for (auto& t : g.cpu)
      if (t.type == CpuType::kLaunch && !t.graph_launch && t.dur > limit) {
        t.dur = typical;
        ++g.queue_full_launches;
      }
  }
  g.gpu_gap = queued.size() >= kMinQueuedGaps ? median(std::move(queued)) : 1'000;
  return g;
}

Replay replay(const Graph& g) {
  Replay out;
  if (g.cpu.empty()) return out;
  std::vector<double> end(g.gpu.size(), 0);
  std::unordered_map<uint32_t, double> stream_free;
  double cpu_t = 0, launched_end = 0, cpu_busy = 0, gpu_busy = 0;
  std::vector<double> step_end(static_cast<size_t>(g.steps), 0);
  for (const CpuTask& t : g.cpu) {
    double at = cpu_t + t.gap + t.data;
    cpu_busy += t.gap + t.dur;
    double done = at + t.dur;
    for (uint32_t x = t.gpu_begin; x < t.gpu_end; ++x) {
      const GpuTask& k = g.gpu[x];
      if (k.removed) continue;
      auto sf = stream_free.find(k.stream);
      double start = at + std::min(t.dur, 1'000.0);  // the work is queued by the end of the call's first microsecond
      if (sf != stream_free.end()) start = std::max(start, sf->second + g.gpu_gap);
      if (k.dep != UINT32_MAX && k.dep < end.size()) start = std::max(start, end[k.dep] + g.gpu_gap);
      end[x] = start + k.dur;
      stream_free[k.stream] = end[x];
      launched_end = std::max(launched_end, end[x]);
      gpu_busy += k.dur;
      auto& se = step_end[t.step];
      se = std::max(se, end[x]);
    }
    if (t.type == CpuType::kBlocking) done = std::max(at, launched_end) + t.dur;
    cpu_t = done;
    step_end[t.step] = std::max(step_end[t.step], cpu_t);
  }
  // Steps end in order; a step whose tasks all ended early ends with the one before.
  for (size_t i = 1; i < step_end.size(); ++i) step_end[i] = std::max(step_end[i], step_end[i - 1]);
  const double n = static_cast<double>(g.steps);
  if (g.steps >= 3)
    out.step_ms = (step_end.back() - step_end.front()) / (n - 1) / 1e6;
  else
    out.step_ms = std::max(cpu_t, launched_end) / n / 1e6;
  out.cpu_busy_ms = cpu_busy / n / 1e6;
  out.gpu_busy_ms = gpu_busy / n / 1e6;
  return out;
}

}  // namespace gpuscope::analyzer::whatif
