// torch's autocast, as the what-if's `amp` applies it (docs/rules.md, "What-if"):
// which ops autocast runs in bf16, which it runs in fp32 after an upcast, which
// keep their inputs' dtype, and which do not speed up whatever their dtype.
// The lists are torch's own (aten/src/ATen/autocast_mode.cpp, CUDA, torch
// 2.0-2.11; torchvision registers its detection ops as fp32).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::analyzer::whatif {

enum class AmpClass : uint8_t {
  kUnknown,    // no op launched it (ops not recorded): the kernel's kind decides
  kKeep,       // runs in its inputs' dtype (pointwise, dropout, cat, ...)
  kLower,      // autocast casts its inputs to bf16 (matmul, linear, conv, bmm, sdpa, ...)
  kFp32,       // autocast runs it in fp32 after an upcast (norms, softmax, losses, sum, ...)
  kNoSpeedup,  // index, gather, scatter, embedding: bound by indices and atomics, not by dtype
  kRnn,        // cuDNN's RNN: weights cast and re-flattened each forward
};

// The class of an op by name: "aten::addmm", "AddmmBackward0" (an autograd
// node: its forward op's class), "torchvision::roi_align".
AmpClass amp_class_of_op(std::string_view name);

// An autograd node's name ("autograd::engine::evaluate_function: AddmmBackward0",
// "AddmmBackward0") -> its forward op in snake case ("addmm"); "" when the name
// is not a backward node.
std::string forward_op_of_node(std::string_view name);

// Elements of each tensor input of an op, from its recorded shapes
// ("[[32,128,768],[3072,768],[3072]]"; a list of tensors counts as their sum;
// scalars count 0). Returns input `index`'s count, 0 when absent or unparseable.
double input_elements(std::string_view shapes, size_t index);

// The dims of the first `count` inputs of a recorded shapes list; a scalar or a
// list of tensors gives no dims. Stops at the first item it cannot read.
std::vector<std::vector<int64_t>> tensor_dims(std::string_view shapes, size_t count);

// A matmul op's multiply-adds x 2 (linear, addmm, mm, bmm, baddbmm, matmul)
// from its recorded shapes, and whether one of M, N, K is not a multiple of
// `align` elements (cuBLAS then runs slower kernels, inductor pads them); 0
// for other ops.
struct MatmulShape {
  double flops = 0;
  bool misaligned = false;
};
MatmulShape matmul_shape(std::string_view op, std::string_view shapes, int64_t align);

// Elements of the inputs autocast casts to bf16 when the op is kLower: the
// weights and bias (inputs 1 and 2) of linear and convolution ops, which are
// parameters cast once per forward; 0 for matmuls of activations.
double parameter_elements(std::string_view op, std::string_view shapes);

}  // namespace gpuscope::analyzer::whatif
