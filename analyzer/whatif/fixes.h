// The fixes the advisor can price, each a transform of the step graph with its
// preconditions (docs/rules.md, "What-if"). A transform scales GPU tasks by the
// calibration's curves, removes or merges tasks, and shortens or lengthens CPU
// intervals; replaying the result predicts the step after the fix.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/whatif/calibration.h"
#include "analyzer/whatif/conv_layout.h"
#include "analyzer/whatif/step_graph.h"

namespace gpuscope::analyzer::whatif {

// What the recording says the job already does, so that a fix it already
// uses is never recommended.
struct JobTraits {
  bool bf16 = false;             // most matmul/conv time is in bf16/fp16 kernels
  bool channels_last = false;    // convolutions without NCHW<->NHWC transposes
  bool has_convolutions = false;
  bool compiled = false;         // torch.compile at work (ops, or Triton kernels)
  bool cuda_graphs = false;      // the step is replayed from CUDA graphs
  bool fused_optimizer = false;  // a fused optimizer kernel, or no foreach one
  bool stable_shapes = true;     // every replayed step launches the same kernels (CUDA graphs need that)
  double data_wait_share = 0;    // DataLoader waits over the step
  int64_t scalar_reads = 0;      // blocking reads of a few bytes (.item()) per step
  int64_t pageable_copies = 0;   // per step
  // torch.compile's layout for the convolutions, from their recorded shapes
  // (conv_layout.h); kUnknown: the kernels' names decide.
  LayoutOpt inductor_layout = LayoutOpt::kUnknown;
};
JobTraits job_traits(const Graph& g, bool torch_compile_seen);

struct Fix {
  std::string_view id;     // "amp", "channels-last", ... (rule ids where a rule names the same fix)
  std::string_view title;  // "bf16 autocast"
  std::string_view code;   // the change, as Python
  // Why it does not apply to this job, or "" when it does.
  std::string (*why_not)(const Graph& g, const JobTraits& t);
  void (*apply)(Graph& g, const JobTraits& t, const Calibration& cal, Bound b);
};

std::span<const Fix> all_fixes();
// The amp fix's transform (amp_fix.cpp).
void amp_apply(Graph& g, const JobTraits& t, const Calibration& cal, Bound b);
const Fix* find_fix(std::string_view id);

}  // namespace gpuscope::analyzer::whatif
