// torch's autocast op lists (autocast_mode.cpp, CUDA, torch 2.0-2.11). They
// changed little across 2.x (sdpa's variants were added to the lower-precision
// list, linalg_vecdot too); every name of any 2.x list is here, so an older
// recording's ops are found as well.
#include "analyzer/whatif/autocast.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace gpuscope::analyzer::whatif {
namespace {

// Autocast casts these ops' floating inputs to bf16 (lower_precision_fp).
constexpr std::array<std::string_view, 40> kLowerPrecision = {
    "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "convolution", "cudnn_convolution", "cudnn_convolution_transpose", "prelu", "addmm",
    "addmv", "addr", "matmul", "einsum", "mm", "mv", "linalg_vecdot", "linear", "addbmm", "baddbmm", "bmm",
    "chain_matmul", "linalg_multi_dot", "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell",
    "rnn_tanh_cell", "rnn_relu_cell", "scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention", "_efficient_attention_forward",
    "_flash_attention_forward", "_scaled_mm", "convolution_backward"};

// Autocast runs these in fp32, casting bf16 inputs up (fp32 list).
constexpr std::array<std::string_view, 62> kFp32 = {
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
    "sinh", "tan", "pow", "softplus", "layer_norm", "native_layer_norm", "group_norm", "native_group_norm",
    "frobenius_norm", "nuclear_norm", "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss",
    "nll_loss2d", "nll_loss_nd", "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss",
    "mse_loss", "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "upsample_linear1d", "upsample_bilinear2d",
    "upsample_trilinear3d", "upsample_bicubic2d", "softmax", "_softmax", "log_softmax", "_log_softmax", "cumprod",
    "cumsum", "prod", "sum", "norm", "linalg_vector_norm"};

// Bound by indices, atomics and irregular access: no faster in bf16.
constexpr std::array<std::string_view, 24> kNoSpeedup = {
    "embedding", "embedding_dense_backward", "embedding_backward", "index", "index_select", "index_add",
    "index_add_", "index_put", "index_put_", "_index_put_impl_", "gather", "scatter", "scatter_", "scatter_add",
    "scatter_add_", "scatter_reduce", "scatter_reduce_", "index_reduce", "masked_scatter", "nonzero", "sort",
    "argsort", "topk", "bincount"};

constexpr std::array<std::string_view, 6> kRnn = {"lstm", "gru", "rnn_tanh", "rnn_relu", "_cudnn_rnn",
                                                  "_cudnn_rnn_backward"};

// torchvision registers autocast for its ops to run them in fp32.
constexpr std::array<std::string_view, 6> kTorchvisionFp32 = {"roi_align", "_roi_align_backward", "nms",
                                                              "ps_roi_align", "roi_pool", "ps_roi_pool"};

template <size_t N>
bool in(const std::array<std::string_view, N>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::string_view strip_namespace(std::string_view name) {
  const size_t at = name.rfind("::");
  return at == std::string_view::npos ? name : name.substr(at + 2);
}

}  // namespace

std::string forward_op_of_node(std::string_view name) {
  constexpr std::string_view kEvaluate = "evaluate_function: ";
  if (const size_t at = name.find(kEvaluate); at != std::string_view::npos) name = name.substr(at + kEvaluate.size());
  name = strip_namespace(name);
  const size_t b = name.rfind("Backward");
  if (b == std::string_view::npos || b == 0) return {};
  for (size_t i = b + 8; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return {};
  std::string out;
  for (size_t i = 0; i < b; ++i) {
    const auto ch = static_cast<unsigned char>(name[i]);
    if (std::isupper(ch)) {
      if (i > 0) out.push_back('_');
      out.push_back(static_cast<char>(std::tolower(ch)));
    } else {
      out.push_back(static_cast<char>(ch));
    }
  }
  return out;
}

AmpClass amp_class_of_op(std::string_view name) {
  std::string node = forward_op_of_node(name);
  if (!node.empty()) {
    if (node == "to_copy" || node == "copy") return AmpClass::kKeep;
    // "CudnnConvolutionBackward0" -> cudnn_convolution, "NativeLayerNormBackward0" -> native_layer_norm.
    return amp_class_of_op(node);
  }
  const bool torchvision = name.starts_with("torchvision::");
  const std::string_view op = strip_namespace(name);
  if (torchvision && in(kTorchvisionFp32, op)) return AmpClass::kFp32;
  if (in(kRnn, op)) return AmpClass::kRnn;
  if (in(kLowerPrecision, op)) return AmpClass::kLower;
  if (in(kNoSpeedup, op) || (op.ends_with("_backward") && in(kNoSpeedup, op.substr(0, op.size() - 9))))
    return AmpClass::kNoSpeedup;
  if (in(kFp32, op)) return AmpClass::kFp32;
  // The backward kernels of fp32 ops keep fp32 (native_layer_norm_backward, ...).
  if (op.ends_with("_backward") && in(kFp32, op.substr(0, op.size() - 9))) return AmpClass::kFp32;
  if (op.ends_with("_backward_data") && in(kFp32, op.substr(0, op.size() - 14))) return AmpClass::kFp32;
  if (op.ends_with("_forward") && in(kFp32, op.substr(0, op.size() - 8))) return AmpClass::kFp32;
  return AmpClass::kKeep;
}

namespace {

// One input of a recorded shapes list: the tensors it holds ([] a scalar: none;
// [d,...] one tensor; [[...],...] a list of tensors).
struct ShapeItem {
  std::vector<std::vector<int64_t>> tensors;
  bool list = false;
};

// The first `count` inputs of a shapes list ("[[32,128,768],[3072,768],[]]");
// stops at the first one that is not closed.
std::vector<ShapeItem> shape_items(std::string_view s, size_t count) {
  std::vector<ShapeItem> out;
  size_t i = s.find('[');
  if (i == std::string_view::npos) return out;
  ++i;
  while (i < s.size() && out.size() < count) {
    while (i < s.size() && (s[i] == ',' || s[i] == ' ')) ++i;
    if (i >= s.size() || s[i] == ']') break;
    ShapeItem item;
    if (s[i] != '[') {  // a bare value
      while (i < s.size() && s[i] != ',' && s[i] != ']') ++i;
      out.push_back(std::move(item));
      continue;
    }
    int depth = 0;
    std::vector<int64_t> dims;
    int64_t value = 0;
    bool digits = false, closed = false;
    for (; i < s.size(); ++i) {
      const char ch = s[i];
      if (ch == '[') {
        item.list = item.list || depth > 0;
        ++depth, dims.clear();
      } else if (std::isdigit(static_cast<unsigned char>(ch))) {
        value = value * 10 + (ch - '0'), digits = true;
      } else if (ch == ',' || ch == ']') {
        if (digits) dims.push_back(value);
        value = 0, digits = false;
        if (ch == ']') {
          if (!dims.empty()) item.tensors.push_back(dims);
          dims.clear();
          if (--depth == 0) {
            ++i, closed = true;
            break;
          }
        }
      }
    }
    if (!closed) break;
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

double input_elements(std::string_view shapes, size_t index) {
  const std::vector<ShapeItem> items = shape_items(shapes, index + 1);
  if (items.size() <= index) return 0;
  double total = 0;
  for (const auto& dims : items[index].tensors) {
    double product = 1;
    for (int64_t d : dims) product *= static_cast<double>(d);
    total += product;
  }
  return total;
}

std::vector<std::vector<int64_t>> tensor_dims(std::string_view shapes, size_t count) {
  std::vector<std::vector<int64_t>> out;
  for (const ShapeItem& item : shape_items(shapes, count))
    out.push_back(!item.list && item.tensors.size() == 1 ? item.tensors[0] : std::vector<int64_t>{});
  return out;
}

MatmulShape matmul_shape(std::string_view op, std::string_view shapes, int64_t align) {
  op = strip_namespace(op);
  size_t a = 0, b = 1;  // the two matrices among the inputs
  if (op == "addmm" || op == "baddbmm" || op == "addbmm") a = 1, b = 2;
  else if (op != "linear" && op != "mm" && op != "bmm" && op != "matmul") return {};
  const auto dims = tensor_dims(shapes, b + 1);
  if (dims.size() <= b || dims[a].empty() || dims[b].empty()) return {};
  const auto& x = dims[a];
  const auto& w = dims[b];
  const int64_t k = x.back();
  // linear's weight is [N, K]; the others' second matrix [..., K, N].
  const int64_t n = op == "linear" ? w.front() : w.back();
  double rows = 1;
  for (size_t i = 0; i + 1 < x.size(); ++i) rows *= static_cast<double>(x[i]);
  if (op == "bmm" || op == "baddbmm") rows = static_cast<double>(x.size() == 3 ? x[0] * x[1] : 0);
  MatmulShape m;
  m.flops = 2 * rows * static_cast<double>(n) * static_cast<double>(k);
  const int64_t inner_m = x.size() >= 2 ? x[x.size() - 2] : 1;
  m.misaligned = align > 1 && (k % align != 0 || n % align != 0 || (x.size() >= 2 && inner_m % align != 0));
  return m;
}

double parameter_elements(std::string_view op, std::string_view shapes) {
  op = strip_namespace(op);
  // nn.LSTM/GRU: the weights are input 1, a list (autocast casts and re-flattens them each forward).
  if (in(kRnn, op)) return input_elements(shapes, 1);
  const bool with_weights = op == "linear" || op.starts_with("conv") || op == "_convolution" ||
                            op == "convolution" || op == "cudnn_convolution" || op == "prelu";
  if (!with_weights) return 0;
  return input_elements(shapes, 1) + (op == "prelu" ? 0 : input_elements(shapes, 2));
}

}  // namespace gpuscope::analyzer::whatif
