#include "tests/analyzer/scenarios.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include "tests/analyzer/sim.h"

namespace gpuscope::testing {
namespace {

using namespace names;

constexpr const char* kMultiTensor =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, "
    "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>, float*, float, float, float, float, float, bool, bool>";
constexpr const char* kSoftmaxBackward =
    "void (anonymous namespace)::softmax_warp_backward<c10::BFloat16, c10::BFloat16, float, 10, false, false>"
    "(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, int, int, int, bool const*)";
constexpr const char* kNll = "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>";

// One training loop, healthy by default: bf16 GEMMs that keep the GPU busy,
// a prefetched batch, a small pinned copy, a fused optimizer, one sync per step.
struct Loop {
  int steps = 12;
  int layers = 6;
  std::string gemm = kGemmBf16;
  std::string dtype = "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\"]";
  int64_t gemm_ns = us(600);
  std::vector<const char*> chain = {kGelu};
  int64_t chain_ns = us(40);
  int64_t dataloader_ns = us(40);
  int64_t copy_src = 2, copy_bytes = 4 << 20, copy_ns = us(80), copy_stream = 7;
  bool sync_at_end = true;
  bool warmup = true;  // step 0 allocates and runs long
  std::function<void(Sim&, int)> before;        // at step start, after the batch arrived
  std::function<void(Sim&, int, bool)> layer;  // after each layer (backward = true in backward)
  std::function<void(Sim&, int)> after_backward;
};

void warmup_extras(Sim& s) {
  s.cpu(ms(30));
  for (int i = 0; i < 3; ++i) {
    s.api("cudaMalloc", ms(1));
    s.cuda_memory(true, 1 << 30);
  }
}

void run(Sim& s, const Loop& L) {
  for (int step = 0; step < L.steps; ++step) {
    s.step_begin();
    if (step == 0 && L.warmup) warmup_extras(s);
    s.dataloader(L.dataloader_ns);
    s.op_begin("aten::to", "[[256,4096]]", "[\"float\"]");
    s.copy(1, L.copy_src, 3, L.copy_bytes, L.copy_ns, L.copy_stream);
    s.op_end();
    if (L.before) L.before(s, step);
    for (int l = 0; l < L.layers; ++l) {
      s.op_begin("aten::linear", "[[256,4096],[4096,4096],[4096]]", L.dtype);
      s.op_begin("aten::addmm", "[[4096],[256,4096],[4096,4096]]", L.dtype);
      s.kernel(L.gemm, L.gemm_ns);
      s.op_end();
      s.op_end();
      for (const char* k : L.chain) {
        s.op_begin(k == kGelu ? "aten::gelu" : k == kAdd ? "aten::add" : "aten::mul", "[[256,4096]]", L.dtype);
        s.kernel(k, L.chain_ns);
        s.op_end();
      }
      if (L.layer) L.layer(s, l, false);
    }
    s.op_begin("autograd::engine::evaluate_function: AddmmBackward0");
    for (int l = 0; l < L.layers; ++l) {
      s.op_begin("aten::mm", "[[256,4096],[4096,4096]]", L.dtype);
      s.kernel(L.gemm, L.gemm_ns);
      s.kernel(L.gemm, L.gemm_ns);
      s.op_end();
      if (L.layer) L.layer(s, l, true);
    }
    s.op_end();
    if (L.after_backward) L.after_backward(s, step);
    s.op_begin("Optimizer.step#AdamW.step");
    for (int i = 0; i < 3; ++i) s.kernel(kMultiTensor, us(60));
    s.op_end();
    if (L.sync_at_end) {
      s.op_begin("aten::item");
      s.sync();
      s.op_end();
    }
    s.step_end();
  }
}

void allocator_calls(Sim& s) {
  s.api("cudaFree", ms(1), true);
  s.cuda_memory(false, 1 << 30);
  s.api("cudaFree", ms(1), true);
  s.cuda_memory(false, 1 << 30);
  s.api("cudaMalloc", ms(2), false, 2);  // out of memory: the allocator frees its cache and retries
  s.api("cudaMalloc", ms(2));
  s.cuda_memory(true, 1 << 30);
}

void write(const std::string& name, bool planted, Sim& s) {
  Loop L;
  if (name == "healthy") {
  } else if (name == "dataloader-stall") {
    if (planted) L.dataloader_ns = ms(8);
  } else if (name == "amp") {
    if (planted) {
      L.gemm = kSgemm;
      L.dtype = "[\"float\",\"float\",\"float\"]";
    }
  } else if (name == "pageable-memcpy") {
    L.copy_bytes = 64 << 20;
    L.copy_src = planted ? 1 : 2;
    L.copy_ns = planted ? ms(3) : ms(1.2);
  } else if (name == "fusion") {
    if (planted) {
      L.chain = {kAdd, kMul, kGelu, kMul, kAdd, kMul};
      L.chain_ns = us(150);
    }
  } else if (name == "launch-bound") {
    s.cfg.launch_cpu_ns = us(25);
    L.layers = 1;
    L.before = [planted](Sim& sim, int) {
      for (int i = 0; i < 400; ++i) {
        sim.op_begin("aten::clamp_min", "[[64,32]]", "[\"float\"]");
        sim.kernel(kTiny, planted ? us(3) : us(60), 7, 2, 128);
        sim.op_end();
      }
    };
  } else if (name == "host-sync") {
    if (planted) {
      auto item = [](Sim& sim) {
        sim.op_begin("aten::item");
        sim.op_begin("aten::_local_scalar_dense");
        sim.copy(2, 3, 1, 4, us(2));
        sim.sync();
        sim.op_end();
        sim.op_end();
      };
      L.layer = [item](Sim& sim, int, bool) {
        item(sim);
        sim.cpu(us(200));
      };
      // Gradient norms read one by one: after the first wait the GPU is idle and
      // each further .item() is a tiny copy and a sync while Python loops.
      L.after_backward = [item](Sim& sim, int) {
        for (int i = 0; i < 12; ++i) sim.kernel(kNll, us(5));
        for (int i = 0; i < 12; ++i) {
          item(sim);
          sim.cpu(us(30));
        }
      };
    }
  } else if (name == "channels-last") {
    L.gemm = kConv;
    L.chain = {};
    if (planted)
      L.layer = [](Sim& sim, int, bool) {
        sim.op_begin("aten::cudnn_convolution", "[[64,64,56,56],[64,64,3,3]]", "[\"c10::BFloat16\",\"c10::BFloat16\"]");
        sim.kernel(kNchwToNhwc, us(120));
        sim.kernel(kNhwcToNchw, us(120));
        sim.op_end();
      };
  } else if (name == "fused-optimizer") {
    // AdamW's foreach path: a handful of multi-tensor kernels per step, each a
    // pass over every parameter (as timm's ResNet-50 and a bf16 MLP on the H200);
    // the fused optimizer's one kernel per step when not planted.
    L.after_backward = [planted](Sim& sim, int) {
      sim.op_begin("Optimizer.step#AdamW.step");
      if (planted) {
        for (int i = 0; i < 8; ++i)
          sim.kernel("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
                     "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::PointwiseOpScalarFunctor"
                     "<float, 4, 3, 0>, std::multiplies<float>, float>(T1, T2, T3, T4)",
                     us(250));
      } else {
        sim.kernel("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
                   "namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::"
                   "FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float*, double, double>(T1, T2, T3, ...)",
                   us(500));
      }
      sim.op_end();
    };
  } else if (name == "memory-pressure") {
    L.before = [planted](Sim& sim, int step) {
      if (step == 1) sim.torch_memory(planted ? 70'000'000'000 : 30'000'000'000, planted ? 76'000'000'000 : 40'000'000'000);
      if (planted) allocator_calls(sim);
    };
  } else if (name == "allocator-churn") {
    L.before = [planted](Sim& sim, int step) {
      if (step == 1) sim.torch_memory(16'000'000'000, 20'000'000'000);
      if (planted) allocator_calls(sim);
    };
  } else if (name == "low-utilization") {
    if (planted) {
      L.layers = 2;
      L.sync_at_end = false;
      L.before = [](Sim& sim, int) {
        sim.op("aten::index", ms(6));
        sim.cpu(ms(3));
      };
    }
  } else if (name == "sdpa") {
    if (planted)
      L.layer = [](Sim& sim, int, bool backward) {
        if (!backward) {
          sim.op_begin("aten::matmul", "[[32,16,1024,64],[32,16,64,1024]]", "[\"c10::BFloat16\",\"c10::BFloat16\"]");
          sim.kernel(kGemmBf16, us(300));
          sim.op_end();
          sim.op_begin("aten::mul", "[[32,16,1024,1024],[]]", "[\"c10::BFloat16\",\"Scalar\"]");
          sim.kernel(kMul, us(100));
          sim.op_end();
          sim.op_begin("aten::softmax", "[[32,16,1024,1024],[]]", "[\"c10::BFloat16\",\"Scalar\"]");
          sim.kernel(kSoftmax, us(250));
          sim.op_end();
          sim.op_begin("aten::matmul", "[[32,16,1024,1024],[32,16,1024,64]]", "[\"c10::BFloat16\",\"c10::BFloat16\"]");
          sim.kernel(kGemmBf16, us(300));
          sim.op_end();
        } else {
          sim.kernel(kGemmBf16, us(300));
          sim.kernel(kSoftmaxBackward, us(250));
          sim.kernel(kGemmBf16, us(300));
        }
      };
    else
      L.after_backward = [](Sim& sim, int) {  // cross entropy: log-softmax after the classifier GEMM
        sim.kernel(kGemmBf16, us(200));
        sim.kernel(kLogSoftmax, us(50));
        sim.kernel(kNll, us(20));
      };
  } else if (name == "copy-overlap") {
    L.copy_bytes = 256 << 20;
    L.copy_ns = ms(5);
    if (!planted) {
      // Prefetch: the next batch is copied on a side stream while this step computes.
      L.copy_ns = us(20);
      L.copy_bytes = 4096;
      L.before = [](Sim& sim, int) {
        sim.kernel(kGemmBf16, us(600));
        sim.copy(1, 2, 3, 256 << 20, ms(5), 13);
      };
    }
  } else if (name == "recompile") {
    L.before = [planted](Sim& sim, int step) {
      if (step == 0 || (planted && (step == 5 || step == 8))) {
        sim.range(2, "_compile.compile_inner (dynamo_timed)", sim.now(), sim.now() + ms(150));
        sim.cpu(ms(150));
      }
    };
  } else if (name == "exposed-communication") {
    if (planted) {
      L.after_backward = [](Sim& sim, int) {
        sim.wait_stream(20, 7);
        sim.kernel(kNccl, ms(3), 20, 32, 512);
        sim.wait_stream(7, 20);
      };
    } else {
      L.layer = [](Sim& sim, int l, bool backward) {
        if (backward && l == 0) {
          sim.wait_stream(20, 7);
          sim.kernel(kNccl, ms(3), 20, 32, 512);
        }
      };
      L.after_backward = [](Sim& sim, int) { sim.wait_stream(7, 20); };
    }
  } else if (name == "odd_names") {
    L.layers = 3;
    L.gemm = "sgemm_<script>alert(\"x\")</script> & 'quotes' \x01\x1b[31m \xff\xfe end";
    L.dtype = "[\"float\"]";
    L.chain = {"user_kernel<|pipe|`tick`*star*_under_>"};
  } else if (name == "nvtx_steps") {
    s.write_steps = false;
    L.steps = 6;
    L.before = [](Sim& sim, int) {
      const int64_t t = sim.now();
      sim.cpu(ms(5));
      sim.range(1, "DataLoader.next", t, sim.now(), 1);
    };
  } else if (name == "graph_replay") {
    L.steps = 10;  // optimizer steps recorded for the first 3 only, NVTX train_step for all
  } else if (name == "graph_steps") {
    // The plugin's optimizer steps for the warm-up, then the collector's: one
    // CUDA graph replay per step.
    L.steps = 12;
    L.before = [](Sim& sim, int step) {
      if (step == 4) sim.step_source = schema::step_source::graph_launch;
    };
  } else if (name == "no_steps") {
    s.write_steps = false;
    L.steps = 3;  // too few for the launch sequence to repeat
  } else if (name == "no_step_table") {
    s.write_steps = false;  // the healthy loop recorded without the torch plugin's steps
  } else if (name == "two_devices") {
    s.recording().device({.id = 1, .name = "NVIDIA H200", .sm_count = 132, .total_memory = 141'000'000'000});
    L.steps = 5;
    L.before = [](Sim& sim, int) {
      sim.device = 1;
      sim.kernel(kGemmBf16, us(300), 30);
      sim.device = 0;
    };
  } else if (name == "no_gpu") {
    s.write_steps = false;
    for (int i = 0; i < 5; ++i) {
      const int64_t t = s.now();
      s.op("aten::mm", ms(2));
      s.range(1, "step", t, s.now());
      s.cpu(us(100));
    }
    return;
  } else {
    throw std::runtime_error("unknown scenario " + name);
  }
  if (name == "nvtx_steps" || name == "graph_replay") {
    // NVTX step ranges around the default loop.
    for (int i = 0; i < L.steps; ++i) {
      Loop one = L;
      one.steps = 1;
      one.warmup = i == 0;
      if (name == "graph_replay") s.write_steps = i < 3;
      const int64_t t = s.now();
      run(s, one);
      s.range(1, "train_step", t, s.now(), 0);
    }
    return;
  }
  run(s, L);
}

// A data-parallel job of four ranks over gloo on the CPU, as the torch plugin
// records one: in each step every rank loads its batch (a DataLoader range),
// computes (ops), enqueues the gradient all-reduce (`c10d::allreduce_` on the
// training thread; torch opens `gloo:all_reduce` on the ProcessGroup's worker
// thread at the enqueue and closes it once every rank has contributed), waits
// for it (no op: the thread is blocked) and steps the optimizer. The ranks
// leave each all-reduce together, so the next step starts at the same time on
// every rank. `extra_data[r]` is rank r's added data time per step.
void write_ranks(const std::string& path, const std::vector<int64_t>& extra_data) {
  const int n = static_cast<int>(extra_data.size()), steps = 12;
  const int64_t data = us(300), compute = ms(15), enqueue = us(50), transfer = us(500), optimizer = us(400);
  int64_t slowest = 0;
  for (int64_t e : extra_data) slowest = std::max(slowest, e);
  for (int r = 0; r < n; ++r) {
    Sim::Config cfg = Sim::rank_of(5000, r, n);
    cfg.write_device = false;
    cfg.cupti_status = "not used: the process did not initialize CUDA";
    cfg.host = "node0";
    Sim s(path, cfg);
    int64_t t = ms(1);
    for (int k = 0; k < steps; ++k) {
      s.cpu(t - s.now());
      s.step_begin();
      s.dataloader(data + extra_data[static_cast<size_t>(r)]);
      s.op("aten::linear", compute);
      const int64_t at = s.now();
      s.op("c10d::allreduce_", enqueue);
      // Everyone arrived when the slowest rank enqueued; the transfer follows.
      const int64_t done = t + data + slowest + compute + enqueue + us(4) + transfer;
      s.range(2, "gloo:all_reduce", at + us(10), done, 0, cfg.pid + 100);  // the gloo worker thread
      s.cpu(done - s.now());
      s.op("Optimizer.step#SGD.step", optimizer);
      s.step_end();
      t = done + optimizer + us(10);
    }
    s.finish();
  }
}

// A data-parallel job of two ranks on GPUs: each step a 10 ms compute kernel
// and an 8 ms NCCL all-reduce kernel on another stream, starting 6 ms into the
// compute on rank 0 (4 ms overlapped, 50 %) and 2 ms into it on rank 1
// (inside it, 100 %). On rank 0 a copy runs beside the exposed part; copies
// are not compute.
void write_nccl_overlap(const std::string& path) {
  for (int r = 0; r < 2; ++r) {
    Sim s(path, Sim::rank_of(7000, r, 2));
    for (int k = 0; k < 10; ++k) {
      s.step_begin();
      s.op_begin("aten::mm");
      s.kernel(names::kGemmBf16, ms(10));
      s.op_end();
      const int64_t start = s.gpu_idle_at() - ms(10);
      const int64_t nccl = start + (r == 0 ? ms(6) : ms(2));
      s.recording().kernel({.context = 1, .stream = 9, .start = nccl, .end = nccl + ms(8), .name = names::kNccl});
      if (r == 0)
        s.recording().memcpy({.context = 1, .stream = 11, .start = start + ms(11), .end = start + ms(13), .copy_kind = 1, .bytes = 1 << 20});
      s.cpu(start + ms(15) - s.now());
      s.op("Optimizer.step#SGD.step", us(100));
      s.step_end();
    }
    s.finish();
  }
}

}  // namespace

void write_ranks_scenario(const std::vector<int64_t>& extra_data_ns, const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  write_ranks(path, extra_data_ns);
}

std::vector<std::string> cross_rank_scenarios() { return {"straggler", "collective-wait"}; }

std::vector<std::string> planted_scenarios() {
  return {"dataloader-stall", "amp",          "pageable-memcpy", "fusion",          "launch-bound",
          "host-sync",        "channels-last", "memory-pressure", "allocator-churn", "low-utilization",
          "sdpa",             "copy-overlap",  "recompile",       "exposed-communication", "fused-optimizer",
          "straggler",        "collective-wait"};
}

void write_scenario(const std::string& name, bool planted, const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  // Cross-rank: rank 2 loads its data 20 ms slower than the others (straggler), or
  // ranks 2 and 3 both do (no single straggler; the others wait: collective-wait).
  if (name == "straggler" || name == "collective-wait" || name == "ranks") {
    std::vector<int64_t> extra(4, 0);
    if (planted && name != "ranks") extra[2] = ms(20);
    if (planted && name == "collective-wait") extra[3] = ms(20);
    write_ranks(path, extra);
    return;
  }
  if (name == "nccl-overlap") {
    write_nccl_overlap(path);
    return;
  }
  Sim::Config cfg;
  if (name == "no_gpu") {
    cfg.cupti_status = "not used: the process did not initialize CUDA";
    cfg.write_device = false;
  }
  if (name == "memory-pressure") cfg.device_memory = 80'000'000'000;
  Sim s(path, cfg);
  write(name, planted, s);
  s.finish();
}

// Fresh: a file an earlier run left under the same pid (pids come round) is
// removed, -wal and -shm too, so no test meets "already exists".
std::string temp_db(const std::string& stem) {
  auto dir = std::filesystem::temp_directory_path() / ("gpuscope-analyzer-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / (stem + ".db")).string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

}  // namespace gpuscope::testing
