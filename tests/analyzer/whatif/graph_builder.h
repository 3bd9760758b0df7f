// Step graphs built by hand for the what-if tests: each call is one CPU task
// (the CPU time before it, its own time) launching at most one GPU task.
#pragma once

#include <string>

#include <initializer_list>

#include "analyzer/whatif/calibration.h"
#include "analyzer/whatif/fixes.h"
#include "analyzer/whatif/step_graph.h"

namespace gpuscope::testing {

class GraphBuilder {
 public:
  // Starts the next step (the first call, the first step).
  void step() { ++step_; }
  // A launch after `gap_us` of CPU time, taking `call_us`, of a task of
  // `gpu_us` on `stream`.
  void launch(double gap_us, double call_us, analyzer::whatif::Kind kind, double gpu_us, uint32_t stream = 7) {
    analyzer::whatif::CpuTask t = task(gap_us, call_us, analyzer::whatif::CpuType::kLaunch);
    analyzer::whatif::GpuTask k;
    k.dur = gpu_us * 1e3;
    k.kind = kind;
    k.stream = stream;
    k.cpu = static_cast<uint32_t>(g_.cpu.size());
    t.gpu_begin = static_cast<uint32_t>(g_.gpu.size());
    g_.gpu.push_back(k);
    t.gpu_end = static_cast<uint32_t>(g_.gpu.size());
    g_.cpu.push_back(t);
  }
  // A launch of a kernel of op call `op` (kernels of one call share it), as
  // autocast and dynamo would see the op (autocast.h).
  void launch_op(double gap_us, double call_us, analyzer::whatif::Kind kind, double gpu_us,
                 analyzer::whatif::AmpClass amp, uint32_t op, bool backward = false, double input_elems = 0,
                 double param_elems = 0, bool graph_break = false) {
    launch(gap_us, call_us, kind, gpu_us);
    analyzer::whatif::GpuTask& k = g_.gpu.back();
    k.amp = amp;
    k.op = op;
    k.backward = backward;
    k.input_elems = static_cast<float>(input_elems);
    k.param_elems = static_cast<float>(param_elems);
    k.graph_break = graph_break;
  }
  // A .item(): a blocking read of a few bytes after `gap_us`.
  void item(double gap_us) {
    analyzer::whatif::CpuTask t = task(gap_us, 5, analyzer::whatif::CpuType::kBlocking);
    t.scalar_read = true;
    g_.cpu.push_back(t);
  }
  // CPU work outside CUDA calls (Python, logging), before the next call.
  void cpu(double us) { pending_ += us; }
  analyzer::whatif::Graph graph(double gpu_gap_us = 1) {
    analyzer::whatif::Graph g = g_;
    g.steps = step_ + 1;
    g.gpu_gap = gpu_gap_us * 1e3;
    g.kernels_per_step.assign(static_cast<size_t>(g.steps), 0);
    for (const auto& k : g.gpu) ++g.kernels_per_step[g.cpu[k.cpu].step];
    return g;
  }

 private:
  analyzer::whatif::CpuTask task(double gap_us, double call_us, analyzer::whatif::CpuType type) {
    analyzer::whatif::CpuTask t;
    t.gap = (gap_us + pending_) * 1e3;
    pending_ = 0;
    t.dur = call_us * 1e3;
    t.type = type;
    t.step = static_cast<uint32_t>(step_);
    t.gpu_begin = t.gpu_end = static_cast<uint32_t>(g_.gpu.size());
    return t;
  }
  analyzer::whatif::Graph g_;
  int step_ = -1;
  double pending_ = 0;
};

// A calibration table with flat curves: `ratio` for every x.
inline void flat(analyzer::whatif::Calibration& cal, const std::string& curve, double ratio) {
  cal.curves[curve].points = {{1, ratio, ratio * 0.9, ratio * 1.1}, {1000, ratio, ratio * 0.9, ratio * 1.1}};
}
inline void cost(analyzer::whatif::Calibration& cal, const std::string& id, double us) {
  cal.costs[id] = {us, us * 0.8, us * 1.2, "us", ""};
}

// `g` with the fixes applied in order, at the calibration's middle values.
inline analyzer::whatif::Graph with(const analyzer::whatif::Graph& g, std::initializer_list<const char*> fixes,
                                    const analyzer::whatif::Calibration& cal) {
  analyzer::whatif::Graph out = g;
  const auto traits = analyzer::whatif::job_traits(g, false);
  for (const char* id : fixes) analyzer::whatif::find_fix(id)->apply(out, traits, cal, analyzer::whatif::Bound::kMid);
  return out;
}

}  // namespace gpuscope::testing
