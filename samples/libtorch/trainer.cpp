// libtorch_trainer: a tiny C++ training loop, so that gpuscope's torch plugin
// can be checked on a process that has libtorch but no Python. It trains a
// two-layer MLP on fixed random data for a fixed number of steps, on CUDA when
// available, and prints one line per step.
//
// Usage: libtorch_trainer [--steps N] [--device cuda|cpu]

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  int steps = 10;
  std::string device_name = torch::cuda::is_available() ? "cuda" : "cpu";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--device") && i + 1 < argc) {
      device_name = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--steps N] [--device cuda|cpu]\n", argv[0]);
      return 2;
    }
  }

  try {
    torch::manual_seed(0);
    const torch::Device device(device_name);
    const int64_t batch = 64, features = 128, hidden = 256, classes = 10;

    torch::nn::Sequential model(torch::nn::Linear(features, hidden), torch::nn::ReLU(),
                                torch::nn::Linear(hidden, hidden), torch::nn::ReLU(),
                                torch::nn::Linear(hidden, classes));
    model->to(device);
    torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

    // One fixed batch: the point is the shape of the work, not learning.
    torch::Tensor inputs = torch::randn({batch, features}, device);
    torch::Tensor targets = torch::randint(0, classes, {batch},
                                           torch::TensorOptions().dtype(torch::kLong).device(device));

    for (int step = 0; step < steps; ++step) {
      auto t0 = std::chrono::steady_clock::now();
      optimizer.zero_grad();
      torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(inputs), targets);
      loss.backward();
      optimizer.step();
      // item() waits for the GPU, so the step time below is the real one.
      float loss_value = loss.item<float>();
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                      .count();
      std::printf("step %d loss %.4f time_ms %.3f\n", step, loss_value, ms);
    }
    std::printf("libtorch_trainer: done on %s\n", device_name.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libtorch_trainer: %s\n", e.what());
    return 1;
  }
  return 0;
}
