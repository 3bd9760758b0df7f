#include "tests/trace_formats/formats_test_util.h"

#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "trace_formats/store/reader.h"
#include "tests/support/recording_builder.h"
#include "tests/support/files.h"

namespace gpuscope::formats::test {

namespace fs = std::filesystem;
using store::kNull;

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::string(GPUSCOPE_BINARY_DIR) + "/formats_test_tmp/" + std::to_string(::getpid()) + "_" +
          std::to_string(counter++);
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!std::getenv("GPUSCOPE_KEEP_TMP")) fs::remove_all(path_, ec);
}

namespace {

// Awkward names: quotes, backslashes, tabs, control bytes, DEL, invalid
// UTF-8 (stray continuation, 0xFF, a surrogate, past U+10FFFF, truncated) next
// to valid multi-byte characters.
const std::string kWeirdKernel = "void k<\"q\">(\\path)\t\x01\x7f \xff\xfe \xc3\xa9 \xe2\x82";
const std::string kWeirdOp =
    "op \"quoted\" \\back\\ \n newline \x1f \xed\xa0\x80 surrogate \xf4\x90\x80\x80 big \xf0\x9f\x98\x80 ok";

}  // namespace

void add_tracer_overhead_range(const std::string& path) {
  const int64_t pid = store::Reader(path).db().query_int("SELECT min(pid) FROM process").value_or(1);
  test_support::RecordingBuilder b(path, test_support::RecordingBuilder::Open::kAppend);
  b.range({.pid = pid, .tid = pid, .source = schema::range_source::tracer_overhead,
           .name = "CUPTI overhead: buffer flush", .start = 1000, .end = 51000});
  b.finish();
}

void make_synthetic_db(const std::string& path, const SyntheticOptions& opt) {
  namespace sc = schema;
  test_support::RecordingBuilder b(path);
  b.meta("origin_ns", "1000000000")
      .meta("origin_utc_ns", "1717000000000000000")
      .meta("host", "node-1.cluster")
      .meta("source", "synthetic test recording")
      .meta("gpuscope_version", "test");

  const int64_t pid = 4100, tid2 = 4101;
  store::ProcessRow p = test_support::python_process(pid, "node-1.cluster");
  p.cmdline = "python3 train.py --tag \"x\"";
  p.start_utc_ns = 1717000000000000000;
  p.end = 1000000 * (opt.steps + 1);
  p.rank = 0;
  p.local_rank = 0;
  p.world_size = opt.second_process ? 2 : 1;
  b.process(p).thread(tid2, "pt_autograd_0");
  for (int64_t d = 0; d < 2; ++d)
    b.device({.id = d, .name = "NVIDIA H200", .uuid = "00112233445566778899aabbccddeef" + std::to_string(d),
              .sm_count = 132, .total_memory = 150110011392, .compute_major = 9, .compute_minor = 0,
              .memory_bandwidth = 4800000000000, .core_clock_khz = 1980000});

  int64_t ext = 1;
  for (int s = 0; s < opt.steps; ++s) {
    const int64_t t0 = 10000 + int64_t{s} * 1000000;
    b.step(s, t0, t0 + 900000);
    b.dataloader(t0, t0 + 50000);
    b.range({.source = sc::range_source::nvtx, .domain = "my_domain", .name = "forward", .start = t0 + 60000,
             .end = t0 + 500000, .depth = 0, .color = 0xFF00FF00, .category = 3});
    // Overlaps "forward" without nesting.
    b.range({.kind = sc::range_kind::start_end, .name = "async region", .start = t0 + 400000, .end = t0 + 700000});
    // Kineto's gpu_user_annotation: tid = stream, category = device.
    b.range({.tid = 7, .source = sc::range_source::torch_other, .kind = sc::range_kind::start_end,
             .domain = "gpu_user_annotation", .name = "forward", .start = t0 + 150000, .end = t0 + 250000,
             .category = 0});
    b.range({.kind = sc::range_kind::mark, .name = "checkpoint", .start = t0 + 450000, .end = t0 + 450000});

    store::OpRow linear{.name = "aten::linear", .start = t0 + 100000, .end = t0 + 300000, .depth = 1,
                        .seq_nr = 40 + s, .shapes = "[[64,256],[256,256],[256]]",
                        .dtypes = "[\"float\",\"float\",\"float\"]", .external_id = ext};
    b.op(linear);
    store::OpRow weird = linear;
    weird.name = kWeirdOp;
    weird.start = t0 + 110000;
    weird.end = t0 + 290000;
    weird.depth = 2;
    weird.seq_nr = kNull;
    weird.shapes = "[[64,";  // not JSON: must be exported as a string
    weird.dtypes = "";
    weird.external_id = ext + 1;
    b.op(weird);
    b.op({.tid = tid2, .name = "AddmmBackward0", .start = t0 + 600000, .end = t0 + 650000, .depth = 0,
          .seq_nr = 40 + s, .backward = 1, .scope = sc::op_scope::backward_function});

    for (int k = 0; k < opt.kernels_per_step; ++k) {
      const int64_t launch = t0 + 120000 + k * 20000;
      const bool driver = k == 2;
      b.launch({.domain = driver ? sc::api_domain::driver : sc::api_domain::runtime, .cbid = driver ? 307 : 211,
                .name = driver ? "cuLaunchKernel" : "cudaLaunchKernel", .start = launch, .end = launch + 5000},
               store::KernelRow{.device = 0, .context = 1, .stream = k == 1 ? 13 : 7, .start = launch + 30000,
                                .end = launch + 30000 + 7000 + k * 111,
                                .name = k == 0   ? std::string_view(kWeirdKernel)
                                        : k == 1 ? "ampere_sgemm_128x64_tn"
                                                 : "triton_poi_fused_0",
                                .grid_x = 16 + k, .block_x = 128, .registers = 64, .static_smem = 1024,
                                .dynamic_smem = k == 1 ? 16384 : 0},
               ext + 1);
    }
    // A graph launch: two nodes under one correlation.
    const int64_t graph = b.next_correlation();
    b.api({.cbid = 311, .name = "cudaGraphLaunch", .start = t0 + 310000, .end = t0 + 312000, .correlation = graph});
    for (int node = 0; node < 2; ++node)
      b.kernel({.context = 1, .stream = 7, .correlation = graph, .start = t0 + 320000 + node * 3000,
                .end = t0 + 322500 + node * 3000, .name = "graph_node_kernel", .graph_id = 5,
                .graph_node_id = 100 + node});
    b.graph_launch({.context = 1, .stream = 7, .graph_id = 5, .correlation = graph, .start = t0 + 320000,
                    .end = t0 + 325500});

    const store::MemcpyRow m{.context = 1, .stream = 7, .start = t0 + 55000, .end = t0 + 60000,
                             .copy_kind = sc::copy_kind::HtoD, .src_kind = sc::mem_kind::pageable,
                             .dst_kind = sc::mem_kind::device, .bytes = 65536};
    b.launch({.cbid = 41, .name = "cudaMemcpyAsync", .start = t0 + 52000, .end = t0 + 58000}, m);
    store::MemcpyRow back = m;
    back.correlation = b.next_correlation();
    back.start = t0 + 700000;
    back.end = t0 + 701000;
    back.copy_kind = sc::copy_kind::DtoH;
    back.src_kind = sc::mem_kind::device;
    back.dst_kind = sc::mem_kind::pinned;
    back.bytes = 40;
    b.memcpy(back);
    store::MemcpyRow peer = m;
    peer.correlation = b.next_correlation();
    peer.start = t0 + 702000;
    peer.end = t0 + 703000;
    peer.copy_kind = sc::copy_kind::PtoP;
    peer.src_kind = peer.dst_kind = sc::mem_kind::device;
    peer.src_device = 0;
    peer.dst_device = 1;
    b.memcpy(peer);
    b.memset({.context = 1, .stream = 7, .correlation = b.next_correlation(), .start = t0 + 704000,
              .end = t0 + 704000, .bytes = 4096, .mem_kind = sc::mem_kind::device});  // zero length
    b.sync({.tid = pid, .type = sc::sync_type::stream_synchronize, .context = 1, .stream = 7, .start = t0 + 800000,
            .end = t0 + 850000, .correlation = b.next_correlation()});

    const store::MemoryEventRow alloc{.device = 0, .ts = t0 + 105000, .source = sc::memory_source::torch_allocator,
                                      .address = 139800000000000 + s, .bytes = 1 << 20, .total_allocated = 1 << 20,
                                      .total_reserved = 2 << 20};
    b.memory(alloc);
    store::MemoryEventRow freed = alloc;
    freed.op = sc::memory_op::free;
    freed.ts = t0 + 880000;
    freed.total_allocated = 0;
    b.memory(freed);
    store::MemoryEventRow cuda = alloc;
    cuda.source = sc::memory_source::cuda;
    cuda.ts = t0 + 106000;
    cuda.total_allocated = kNull;
    cuda.total_reserved = kNull;
    cuda.correlation = 9999;
    b.memory(cuda);

    b.counter({.device = 0, .name = "gpu_memory_used", .ts = t0 + 106000, .value = double(2 << 20)});
    b.counter({.device = 0, .name = "nvml_sm_util_pct", .ts = t0 + 106000, .value = 37.5});
    b.counter({.device = kNull, .name = "host_rss_bytes", .ts = t0 + 106000, .value = 1.5e9});
    ext += 2;
  }
  // A range the process never closed.
  b.range({.tid = tid2, .source = sc::range_source::torch_user, .name = "never closed", .start = 5000, .depth = 0});

  if (opt.second_process) {
    const int64_t pid2 = 4200;
    store::ProcessRow q = p;
    q.pid = pid2;
    q.rank = 1;
    q.local_rank = 1;
    b.process(q);
    // Correlation 1 as pid 4100's first launch: flows must stay apart.
    b.api({.cbid = 211, .name = "cudaLaunchKernel", .start = 20000, .end = 25000, .correlation = 1});
    b.kernel({.device = 1, .context = 1, .stream = 7, .correlation = 1, .start = 40000, .end = 52000,
              .name = "ampere_sgemm_128x64_tn"});
    b.step(0, 10000, 910000);
  }
  b.finish();
  b.writer().connection().exec("PRAGMA journal_mode=DELETE");
}

std::map<std::string, int64_t> table_totals(const std::string& db_path) {
  store::Reader r(db_path);
  std::map<std::string, int64_t> out;
  for (const char* t : {"process", "thread", "device", "kernel", "memcpy", "memset", "api_call", "sync",
                        "memory_event", "graph_launch", "range", "op", "external_correlation", "step", "counter"})
    out[std::string(t) + ".count"] = r.count(t);
  for (const char* t : {"kernel", "memcpy", "memset", "api_call", "sync", "graph_launch", "range", "op", "step"})
    out[std::string(t) + ".duration"] =
        r.db().query_int("SELECT coalesce(sum(\"end\" - start), 0) FROM \"" + std::string(t) + "\"").value_or(0);
  out["memcpy.bytes"] = r.db().query_int("SELECT coalesce(sum(bytes), 0) FROM memcpy").value_or(0);
  out["memory_event.bytes"] = r.db().query_int("SELECT coalesce(sum(bytes), 0) FROM memory_event").value_or(0);
  out["kernel.grid"] = r.db().query_int("SELECT coalesce(sum(grid_x * grid_y * grid_z), 0) FROM kernel").value_or(0);
  out["range.unclosed"] = r.db().query_int("SELECT count(*) FROM range WHERE \"end\" IS NULL").value_or(0);
  return out;
}

std::string gunzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return {};
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}


RunResult run(const std::string& command) {
  RunResult r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string gpuscope_bin() { return std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope"; }

std::vector<std::string> data_files(const std::string& suffix) {
  std::vector<std::string> out;
  fs::path dir = fs::path(GPUSCOPE_SOURCE_DIR) / "tests" / "data";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpuscope::formats::test
