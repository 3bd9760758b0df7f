#include "tests/analyzer/sim.h"

#include <algorithm>
#include <cstdio>

namespace gpuscope::testing {

Sim::Sim(const std::string& path, Config c) : cfg(std::move(c)), w_((static_cast<void>(cfg.append || std::remove(path.c_str()) != 0), path)) {
  w_.begin();
  store::ProcessRow p;
  p.pid = cfg.pid;
  p.host = cfg.host;
  p.rank = cfg.rank;
  p.local_rank = cfg.rank;
  p.world_size = cfg.world_size;
  p.exe = "/usr/bin/python3";
  p.cmdline = "python3 train.py";
  p.cupti_status = cfg.cupti_status;
  w_.put(p);
  w_.put(store::ThreadRow{cfg.pid, cfg.tid, "python3"});
  if (cfg.write_device) {
    store::DeviceRow d;
    d.id = 0;
    d.name = "NVIDIA H200";
    d.uuid = "00";
    d.sm_count = cfg.sm_count;
    d.total_memory = cfg.device_memory;
    d.compute_major = 9;
    d.compute_minor = 0;
    w_.put(d);
  }
}

Sim::~Sim() { finish(); }

void Sim::finish() {
  if (finished_) return;
  finished_ = true;
  w_.commit();
}

void Sim::op_begin(std::string_view name, std::string_view shapes, std::string_view dtypes) {
  ops_.push_back({std::string(name), std::string(shapes), std::string(dtypes), cpu_, ext_++});
  cpu_ += us(1);
}

void Sim::op_end() {
  Open o = ops_.back();
  ops_.pop_back();
  cpu_ += us(1);
  store::OpRow r;
  r.pid = cfg.pid;
  r.tid = cfg.tid;
  r.name = o.name;
  r.start = o.start;
  r.end = cpu_;
  r.depth = static_cast<int64_t>(ops_.size());
  r.shapes = o.shapes;
  r.dtypes = o.dtypes;
  r.external_id = o.ext;
  w_.add(r);
}

void Sim::range(int64_t source, std::string_view name, int64_t start, int64_t end, int64_t depth, int64_t tid) {
  store::RangeRow r;
  r.pid = cfg.pid;
  r.tid = tid == store::kNull ? cfg.tid : tid;
  r.source = source;
  r.kind = 1;
  r.name = name;
  r.start = start;
  r.end = end;
  r.depth = depth;
  w_.add(r);
}

void Sim::dataloader(int64_t ns) {
  range(3, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", cpu_, cpu_ + ns);
  cpu_ += ns;
}

int64_t Sim::launch(std::string_view api_name, int64_t stream, int64_t dur) {
  const int64_t corr = corr_++;
  store::ApiCallRow a;
  a.pid = cfg.pid;
  a.tid = cfg.tid;
  a.name = api_name;
  a.start = cpu_ + (cfg.launch_cpu_ns - cfg.launch_api_ns);
  a.end = a.start + cfg.launch_api_ns;
  a.correlation = corr;
  w_.add(a);
  if (!ops_.empty()) w_.put(store::ExternalCorrelationRow{cfg.pid, corr, ops_.back().ext});
  int64_t& end = stream_end_[stream];
  gpu_start_ = std::max(end, a.end + cfg.launch_latency_ns);
  end = gpu_start_ + dur;
  cpu_ += cfg.launch_cpu_ns;
  return corr;
}

int64_t Sim::kernel(std::string_view name, int64_t dur, int64_t stream, int64_t grid, int64_t block) {
  const int64_t corr = launch("cudaLaunchKernel", stream, dur);
  store::KernelRow k;
  k.pid = cfg.pid;
  k.device = device;
  k.context = 1;
  k.stream = stream;
  k.correlation = corr;
  k.start = gpu_start_;
  k.end = gpu_start_ + dur;
  k.name = name;
  k.grid_x = grid;
  k.block_x = block;
  w_.add(k);
  return corr;
}

int64_t Sim::copy(int64_t copy_kind, int64_t src_kind, int64_t dst_kind, int64_t bytes, int64_t dur, int64_t stream,
                  bool blocking) {
  const int64_t corr = launch(blocking ? "cudaMemcpy" : "cudaMemcpyAsync", stream, dur);
  store::MemcpyRow m;
  m.pid = cfg.pid;
  m.device = device;
  m.context = 1;
  m.stream = stream;
  m.correlation = corr;
  m.start = gpu_start_;
  m.end = gpu_start_ + dur;
  m.copy_kind = copy_kind;
  m.src_kind = src_kind;
  m.dst_kind = dst_kind;
  m.bytes = bytes;
  w_.add(m);
  if (blocking) cpu_ = std::max(cpu_, m.end + us(2));
  return corr;
}

int64_t Sim::memset(int64_t bytes, int64_t dur, int64_t stream) {
  const int64_t corr = launch("cudaMemsetAsync", stream, dur);
  store::MemsetRow m;
  m.pid = cfg.pid;
  m.device = device;
  m.context = 1;
  m.stream = stream;
  m.correlation = corr;
  m.start = gpu_start_;
  m.end = gpu_start_ + dur;
  m.bytes = bytes;
  m.mem_kind = 3;
  w_.add(m);
  return corr;
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
  const int64_t corr = corr_++;
  const int64_t start = cpu_;
  const int64_t end = std::max(cpu_ + us(2), gpu_idle_at() + us(2));
  store::ApiCallRow a;
  a.pid = cfg.pid;
  a.tid = cfg.tid;
  a.name = api_name;
  a.start = start;
  a.end = end;
  a.correlation = corr;
  w_.add(a);
  if (!ops_.empty()) w_.put(store::ExternalCorrelationRow{cfg.pid, corr, ops_.back().ext});
  store::SyncRow s;
  s.pid = cfg.pid;
  s.type = api_name == "cudaDeviceSynchronize" ? 4 : 3;
  s.context = 1;
  s.stream = 7;
  s.start = start;
  s.end = end;
  s.correlation = corr;
  w_.add(s);
  cpu_ = end;
}

void Sim::api(std::string_view name, int64_t dur, bool waits_for_gpu, int64_t rc) {
  const int64_t corr = corr_++;
  store::ApiCallRow a;
  a.pid = cfg.pid;
  a.tid = cfg.tid;
  a.name = name;
  a.start = cpu_;
  a.end = (waits_for_gpu ? std::max(cpu_, gpu_idle_at()) : cpu_) + dur;
  a.correlation = corr;
  a.return_code = rc;
  w_.add(a);
  if (!ops_.empty()) w_.put(store::ExternalCorrelationRow{cfg.pid, corr, ops_.back().ext});
  cpu_ = a.end;
}

void Sim::torch_memory(int64_t allocated, int64_t reserved) {
  store::MemoryEventRow m;
  m.pid = cfg.pid;
  m.device = 0;
  m.ts = cpu_;
  m.op = 1;
  m.source = 2;
  m.bytes = 1 << 20;
  m.total_allocated = allocated;
  m.total_reserved = reserved;
  w_.add(m);
}

void Sim::cuda_memory(bool alloc, int64_t bytes) {
  store::MemoryEventRow m;
  m.pid = cfg.pid;
  m.device = 0;
  m.ts = cpu_;
  m.op = alloc ? 1 : 2;
  m.source = 1;
  m.mem_kind = 3;
  m.bytes = bytes;
  w_.add(m);
}

void Sim::step_begin() { step_start_ = cpu_; }

void Sim::step_end() {
  if (write_steps) w_.add(store::StepRow{cfg.pid, step_no_, step_start_, cpu_, 2});
  ++step_no_;
}

}  // namespace gpuscope::testing
