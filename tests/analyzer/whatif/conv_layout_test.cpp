// Inductor's layout decision from recorded convolution shapes (conv_layout.h):
// the rules of torch/_inductor/graph.py's decide_layout_opt for training graphs.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/whatif/conv_layout.h"

namespace gpuscope::testing {
namespace {

using analyzer::whatif::inductor_conv_layout;
using analyzer::whatif::LayoutOpt;

// A model whose ops are the given (name, shapes) pairs.
struct Ops {
  std::vector<std::string> strings{""};
  analyzer::Model m;
  Ops(std::initializer_list<std::pair<const char*, const char*>> ops) {
    for (const auto& [name, shapes] : ops) {
      analyzer::OpRec r;
      r.name = static_cast<uint32_t>(strings.size());
      strings.push_back(name);
      r.shapes = static_cast<uint32_t>(strings.size());
      strings.push_back(shapes);
      m.ops.push_back(r);
    }
    m.strings = &strings;
  }
};

TEST(WhatIfConvLayout, AResNetIsCompiledChannelsLast) {
  Ops x({{"aten::conv2d", "[[32,3,224,224],[64,3,7,7],[],[],[],[],[]]"},
         {"aten::conv2d", "[[32,64,56,56],[64,64,3,3],[],[],[],[],[]]"},
         {"aten::conv2d", "[[32,256,56,56],[64,256,1,1],[],[],[],[],[]]"},  // 1x1 may narrow
         {"aten::add", "[[32,64,56,56],[32,64,56,56],[]]"}});
  EXPECT_EQ(inductor_conv_layout(x.m).layout, LayoutOpt::kYes);
}

TEST(WhatIfConvLayout, ANarrowingKernelKeepsNchw) {
  // A UNet's output convolution, 128 -> 3 channels with a 3x3 kernel.
  Ops x({{"aten::conv2d", "[[32,3,64,64],[128,3,3,3],[128],[],[],[],[]]"},
         {"aten::conv2d", "[[32,128,64,64],[128,128,3,3],[128],[],[],[],[]]"},
         {"aten::conv_transpose2d", "[[32,256,32,32],[256,128,4,4],[128],[],[],[],[],[]]"},
         {"aten::conv2d", "[[32,128,64,64],[3,128,3,3],[3],[],[],[],[]]"}});
  const auto l = inductor_conv_layout(x.m);
  EXPECT_EQ(l.layout, LayoutOpt::kNo);
  EXPECT_NE(l.why.find("[3,128,3,3]"), std::string::npos) << l.why;
}

TEST(WhatIfConvLayout, GroupedButNotDepthwiseKeepsNchw) {
  // Depthwise (one input channel per group) keeps channels-last...
  Ops dw({{"aten::conv2d", "[[64,96,56,56],[96,1,7,7],[96],[],[],[],[]]"},
          {"aten::conv2d", "[[64,96,56,56],[384,96,1,1],[384],[],[],[],[]]"}});
  EXPECT_EQ(inductor_conv_layout(dw.m).layout, LayoutOpt::kYes);
  // ...groups of 4 input channels (ResNeXt) do not.
  Ops grouped({{"aten::conv2d", "[[64,128,56,56],[128,4,3,3],[],[],[],[],[]]"},
               {"aten::conv2d", "[[64,128,56,56],[256,128,1,1],[],[],[],[],[]]"}});
  EXPECT_EQ(inductor_conv_layout(grouped.m).layout, LayoutOpt::kNo);
  // A transposed convolution's weight is [in, out/groups, ...]: 256 -> 128 is not grouped.
  Ops up({{"aten::conv_transpose2d", "[[8,256,32,32],[256,128,4,4],[],[],[],[],[],[]]"}});
  EXPECT_EQ(inductor_conv_layout(up.m).layout, LayoutOpt::kYes);
}

TEST(WhatIfConvLayout, SmallChannelsOrNoShapes) {
  Ops small({{"aten::conv2d", "[[8,3,32,32],[32,3,3,3],[],[],[],[],[]]"},
             {"aten::conv2d", "[[8,32,32,32],[64,32,3,3],[],[],[],[],[]]"}});
  EXPECT_EQ(inductor_conv_layout(small.m).layout, LayoutOpt::kNo);
  Ops none({{"aten::linear", "[[8,32],[64,32],[64]]"}});
  EXPECT_EQ(inductor_conv_layout(none.m).layout, LayoutOpt::kUnknown);
  // Only aten::convolution recorded (a model calling it directly): used as well.
  Ops direct({{"aten::convolution", "[[32,128,64,64],[128,128,3,3],[128],[],[],[],[],[],[]]"}});
  EXPECT_EQ(inductor_conv_layout(direct.m).layout, LayoutOpt::kYes);
  // Damaged shapes are skipped, not misread.
  Ops damaged({{"aten::conv2d", "[[32,128,6"}, {"aten::conv2d", "garbage"}});
  EXPECT_EQ(inductor_conv_layout(damaged.m).layout, LayoutOpt::kUnknown);
}

}  // namespace
}  // namespace gpuscope::testing
