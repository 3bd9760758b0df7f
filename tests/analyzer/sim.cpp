#include "tests/analyzer/sim.h"

#include <algorithm>

namespace gpuscope::testing {

namespace sc = schema;
using test_support::RecordingBuilder;

Sim::Sim(const std::string& path, Config c)
    : cfg(std::move(c)), b_(path, cfg.append ? RecordingBuilder::Open::kAppend : RecordingBuilder::Open::kReplace) {
  store::ProcessRow p = test_support::python_process(cfg.pid, cfg.host);
  p.rank = p.local_rank = cfg.rank;
  p.world_size = cfg.world_size;
  p.cupti_status = cfg.cupti_status;
  b_.process(p);
  if (cfg.write_device)
    b_.device({.id = 0, .name = "NVIDIA H200", .uuid = "00", .sm_count = cfg.sm_count,
               .total_memory = cfg.device_memory, .compute_major = 9, .compute_minor = 0});
}

void Sim::op_begin(std::string_view name, std::string_view shapes, std::string_view dtypes) {
  ops_.push_back({std::string(name), std::string(shapes), std::string(dtypes), cpu_, ext_++});
  cpu_ += us(1);
}

void Sim::op_end() {
  Open o = ops_.back();
  ops_.pop_back();
  cpu_ += us(1);
  b_.op({.name = o.name, .start = o.start, .end = cpu_, .depth = static_cast<int64_t>(ops_.size()),
         .shapes = o.shapes, .dtypes = o.dtypes, .external_id = o.ext});
}

void Sim::range(int64_t source, std::string_view name, int64_t start, int64_t end, int64_t depth, int64_t tid) {
  b_.range({.tid = tid == store::kNull ? cfg.pid : tid, .source = source, .name = name, .start = start, .end = end,
            .depth = depth});
}

void Sim::dataloader(int64_t ns) {
  b_.dataloader(cpu_, cpu_ + ns);
  cpu_ += ns;
}

store::ApiCallRow Sim::launch_call(std::string_view api_name, int64_t stream, int64_t dur) {
  const int64_t start = cpu_ + (cfg.launch_cpu_ns - cfg.launch_api_ns);
  const store::ApiCallRow a{.name = api_name, .start = start, .end = start + cfg.launch_api_ns};
  int64_t& end = stream_end_[stream];
  gpu_start_ = std::max(end > 0 ? end + cfg.kernel_gap_ns : 0, a.end + cfg.launch_latency_ns);
  end = gpu_start_ + dur;
  cpu_ += cfg.launch_cpu_ns;
  return a;
}

int64_t Sim::kernel(std::string_view name, int64_t dur, int64_t stream, int64_t grid, int64_t block) {
  const store::ApiCallRow call = launch_call("cudaLaunchKernel", stream, dur);
  return b_.launch(call,
                   {.device = device, .context = 1, .stream = stream, .start = gpu_start_, .end = gpu_start_ + dur,
                    .name = name, .grid_x = grid, .block_x = block},
                   current_op());
}

int64_t Sim::copy(int64_t copy_kind, int64_t src_kind, int64_t dst_kind, int64_t bytes, int64_t dur, int64_t stream,
                  bool blocking) {
  const store::ApiCallRow call = launch_call(blocking ? "cudaMemcpy" : "cudaMemcpyAsync", stream, dur);
  const int64_t corr = b_.launch(call,
                                 store::MemcpyRow{.device = device, .context = 1, .stream = stream, .start = gpu_start_,
                                                  .end = gpu_start_ + dur, .copy_kind = copy_kind,
                                                  .src_kind = src_kind, .dst_kind = dst_kind, .bytes = bytes},
                                 current_op());
  if (blocking) cpu_ = std::max(cpu_, gpu_start_ + dur + us(2));
  return corr;
}

int64_t Sim::memset(int64_t bytes, int64_t dur, int64_t stream) {
  const store::ApiCallRow call = launch_call("cudaMemsetAsync", stream, dur);
  return b_.launch(call,
                   store::MemsetRow{.device = device, .context = 1, .stream = stream, .start = gpu_start_,
                                    .end = gpu_start_ + dur, .bytes = bytes, .mem_kind = sc::mem_kind::device},
                   current_op());
}

void Sim::wait_stream(int64_t waiter, int64_t waitee) {
  int64_t& w = stream_end_[waiter];
  w = std::max(w, stream_end_[waitee]);
  cpu_ += us(2);
}

int64_t Sim::gpu_idle_at() const {
  int64_t t = 0;
  for (auto& [s, e] : stream_end_) t = std::max(t, e);
  return t;
}

void Sim::sync(std::string_view api_name) {
  const int64_t start = cpu_;
  const int64_t end = std::max(cpu_ + us(2), gpu_idle_at() + us(2));
  const int64_t type =
      api_name == "cudaDeviceSynchronize" ? sc::sync_type::context_synchronize : sc::sync_type::stream_synchronize;
  b_.launch({.name = api_name, .start = start, .end = end},
            store::SyncRow{.type = type, .context = 1, .stream = 7, .start = start, .end = end}, current_op());
  cpu_ = end;
}

void Sim::api(std::string_view name, int64_t dur, bool waits_for_gpu, int64_t rc) {
  const int64_t corr = b_.next_correlation();
  const int64_t end = (waits_for_gpu ? std::max(cpu_, gpu_idle_at()) : cpu_) + dur;
  b_.api({.name = name, .start = cpu_, .end = end, .correlation = corr, .return_code = rc});
  if (current_op() != store::kNull) b_.external_correlation(corr, current_op());
  cpu_ = end;
}

void Sim::torch_memory(int64_t allocated, int64_t reserved) {
  b_.memory({.device = 0, .ts = cpu_, .op = sc::memory_op::alloc, .source = sc::memory_source::torch_allocator,
             .bytes = 1 << 20, .total_allocated = allocated, .total_reserved = reserved});
}

void Sim::cuda_memory(bool alloc, int64_t bytes) {
  b_.memory({.device = 0, .ts = cpu_, .op = alloc ? sc::memory_op::alloc : sc::memory_op::free,
             .source = sc::memory_source::cuda, .mem_kind = sc::mem_kind::device, .bytes = bytes});
}

void Sim::step_begin() { step_start_ = cpu_; }

void Sim::step_end() {
  if (write_steps) b_.step(step_no_, step_start_, cpu_, step_source);
  ++step_no_;
}

}  // namespace gpuscope::testing
