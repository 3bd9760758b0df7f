// Whether torch.compile runs a training graph's convolutions channels-last:
// inductor's layout optimization (torch/_inductor/graph.py, decide_layout_opt,
// torch 2.1-2.11), decided from the convolutions' recorded shapes.
#pragma once

#include <string>

#include "analyzer/model.h"

namespace gpuscope::analyzer::whatif {

enum class LayoutOpt : uint8_t {
  kUnknown,  // no convolution with recorded shapes (ops off, an import)
  kYes,      // inductor compiles the convolutions channels-last
  kNo,       // inductor keeps them in the layout they came in (NCHW)
};

struct ConvLayout {
  LayoutOpt layout = LayoutOpt::kUnknown;
  std::string why;  // for kNo: the convolution that turned it off, e.g. "a convolution of weight [3,128,3,3] ..."
};

// Inductor's training rules: off when any convolution is grouped with more
// than one input channel per group, when any has a kernel wider than 1 and at
// most half as many output as input channels (weight.size(0) * 2 <= size(1)),
// or when every convolution has at most 64 input and output channels.
ConvLayout inductor_conv_layout(const Model& m);

}  // namespace gpuscope::analyzer::whatif
