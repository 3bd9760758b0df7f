#include "analyzer/whatif/conv_layout.h"

#include "analyzer/whatif/autocast.h"

#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

namespace gpuscope::analyzer::whatif {
namespace {

using Dims = std::vector<int64_t>;

struct Conv {
  Dims input, weight;
  bool transposed = false;
};

// The model's convolutions as the user called them (aten::conv2d,
// aten::conv_transpose2d, ...), each distinct shape once; aten::convolution
// stands in where only it was recorded (its groups and transposed flag are not
// among the shapes, so they are inferred from the channels).
std::vector<Conv> recorded_convolutions(const Model& m) {
  std::set<std::pair<uint32_t, uint32_t>> seen;  // (name, shapes)
  std::vector<Conv> user, plain;
  for (const OpRec& op : m.ops) {
    if (op.shapes == kNone || !seen.insert({op.name, op.shapes}).second) continue;
    std::string_view name = m.str(op.name);
    if (!name.starts_with("aten::")) continue;
    name.remove_prefix(6);
    const bool transposed = name.starts_with("conv_transpose");
    const bool user_conv = transposed || name == "conv1d" || name == "conv2d" || name == "conv3d";
    if (!user_conv && name != "convolution") continue;
    auto shapes = tensor_dims(m.str(op.shapes), 2);
    if (shapes.size() < 2 || shapes[0].size() < 3 || shapes[1].size() != shapes[0].size()) continue;
    Conv c{std::move(shapes[0]), std::move(shapes[1]), transposed};
    (user_conv ? user : plain).push_back(std::move(c));
  }
  return user.empty() ? plain : user;
}

std::string dims_text(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace

ConvLayout inductor_conv_layout(const Model& m) {
  const std::vector<Conv> convs = recorded_convolutions(m);
  ConvLayout out;
  if (convs.empty()) return out;
  bool all_small = true;
  for (const Conv& c : convs) {
    const int64_t in_channels = c.input[1];
    const int64_t w0 = c.weight[0], w1 = c.weight[1];
    // A weight is [out, in/groups, k...], or [in, out/groups, k...] transposed.
    const int64_t per_group = c.transposed ? w0 : w1;
    const int64_t groups = per_group > 0 && in_channels % per_group == 0 ? in_channels / per_group : 1;
    if (groups > 1 && w1 > 1) {
      out.layout = LayoutOpt::kNo;
      out.why = "a grouped convolution with more than one input channel per group (weight " + dims_text(c.weight) + ")";
      return out;
    }
    if (w0 * 2 <= w1 && c.weight[2] > 1) {
      out.layout = LayoutOpt::kNo;
      out.why = "a convolution with at most half as many output as input channels (weight " + dims_text(c.weight) + ")";
      return out;
    }
    all_small = all_small && w0 <= 64 && w1 <= 64;
  }
  if (all_small) {
    out.layout = LayoutOpt::kNo;
    out.why = "every convolution has at most 64 channels";
    return out;
  }
  out.layout = LayoutOpt::kYes;
  return out;
}

}  // namespace gpuscope::analyzer::whatif
