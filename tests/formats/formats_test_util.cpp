#include "tests/formats/formats_test_util.h"

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

#include "store/reader.h"
#include "store/writer.h"

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

void make_synthetic_db(const std::string& path, const SyntheticOptions& opt) {
  fs::remove(path);
  store::Writer w(path);
  w.begin();
  w.set_meta("origin_ns", "1000000000");
  w.set_meta("origin_utc_ns", "1717000000000000000");
  w.set_meta("host", "node-1.cluster");
  w.set_meta("source", "synthetic test recording");
  w.set_meta("gpuscope_version", "test");

  const int64_t pid = 4100, tid = 4100, tid2 = 4101;
  store::ProcessRow p;
  p.pid = pid;
  p.host = "node-1.cluster";
  p.exe = "/usr/bin/python3";
  p.cmdline = "python3 train.py --tag \"x\"";
  p.start_utc_ns = 1717000000000000000;
  p.start = 0;
  p.end = 1000000 * (opt.steps + 1);
  p.rank = 0;
  p.local_rank = 0;
  p.world_size = opt.second_process ? 2 : 1;
  p.cupti_status = "ok";
  w.put(p);
  w.put(store::ThreadRow{pid, tid, "python3"});
  w.put(store::ThreadRow{pid, tid2, "pt_autograd_0"});
  for (int64_t d = 0; d < 2; ++d) {
    store::DeviceRow dev;
    dev.id = d;
    dev.name = "NVIDIA H200";
    dev.uuid = "00112233445566778899aabbccddeef" + std::to_string(d);
    dev.sm_count = 132;
    dev.total_memory = 150110011392;
    dev.compute_major = 9;
    dev.compute_minor = 0;
    dev.memory_bandwidth = 4800000000000;
    dev.core_clock_khz = 1980000;
    w.put(dev);
  }

  int64_t corr = 1, ext = 1;
  for (int s = 0; s < opt.steps; ++s) {
    const int64_t t0 = 10000 + int64_t{s} * 1000000;
    w.add(store::StepRow{pid, s, t0, t0 + 900000, 2});
    store::RangeRow dl;
    dl.pid = pid;
    dl.tid = tid;
    dl.source = 3;
    dl.name = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
    dl.start = t0;
    dl.end = t0 + 50000;
    dl.depth = 0;
    w.add(dl);
    store::RangeRow nv;
    nv.pid = pid;
    nv.tid = tid;
    nv.source = 1;
    nv.domain = "my_domain";
    nv.name = "forward";
    nv.start = t0 + 60000;
    nv.end = t0 + 500000;
    nv.depth = 0;
    nv.color = 0xFF00FF00;
    nv.category = 3;
    w.add(nv);
    store::RangeRow se = nv;
    se.kind = 2;
    se.domain = "";
    se.name = "async region";
    se.start = t0 + 400000;
    se.end = t0 + 700000;  // overlaps "forward" without nesting
    se.depth = kNull;
    se.color = kNull;
    se.category = kNull;
    w.add(se);
    store::RangeRow gpu_ann;  // Kineto's gpu_user_annotation: tid = stream, category = device
    gpu_ann.pid = pid;
    gpu_ann.tid = 7;
    gpu_ann.source = 6;
    gpu_ann.kind = 2;
    gpu_ann.domain = "gpu_user_annotation";
    gpu_ann.name = "forward";
    gpu_ann.start = t0 + 150000;
    gpu_ann.end = t0 + 250000;
    gpu_ann.category = 0;
    w.add(gpu_ann);
    store::RangeRow mark = se;
    mark.kind = 3;
    mark.name = "checkpoint";
    mark.start = mark.end = t0 + 450000;
    w.add(mark);

    store::OpRow linear;
    linear.pid = pid;
    linear.tid = tid;
    linear.name = "aten::linear";
    linear.start = t0 + 100000;
    linear.end = t0 + 300000;
    linear.depth = 1;
    linear.seq_nr = 40 + s;
    linear.shapes = "[[64,256],[256,256],[256]]";
    linear.dtypes = "[\"float\",\"float\",\"float\"]";
    linear.external_id = ext;
    w.add(linear);
    store::OpRow weird = linear;
    weird.name = kWeirdOp;
    weird.start = t0 + 110000;
    weird.end = t0 + 290000;
    weird.depth = 2;
    weird.seq_nr = kNull;
    weird.shapes = "[[64,";  // not JSON: must be exported as a string
    weird.dtypes = "";
    weird.external_id = ext + 1;
    w.add(weird);
    store::OpRow backward = linear;
    backward.tid = tid2;
    backward.name = "AddmmBackward0";
    backward.start = t0 + 600000;
    backward.end = t0 + 650000;
    backward.depth = 0;
    backward.backward = 1;
    backward.scope = 1;
    backward.shapes = "";
    backward.dtypes = "";
    backward.external_id = kNull;
    w.add(backward);

    for (int k = 0; k < opt.kernels_per_step; ++k) {
      const int64_t launch = t0 + 120000 + k * 20000;
      store::ApiCallRow api;
      api.pid = pid;
      api.tid = tid;
      api.domain = k == 2 ? 2 : 1;
      api.cbid = k == 2 ? 307 : 211;
      api.name = k == 2 ? "cuLaunchKernel" : "cudaLaunchKernel";
      api.start = launch;
      api.end = launch + 5000;
      api.correlation = corr;
      w.add(api);
      w.put(store::ExternalCorrelationRow{pid, corr, ext + 1});
      store::KernelRow kr;
      kr.pid = pid;
      kr.device = 0;
      kr.context = 1;
      kr.stream = k == 1 ? 13 : 7;
      kr.correlation = corr;
      kr.start = launch + 30000;
      kr.end = launch + 30000 + 7000 + k * 111;
      kr.name = k == 0 ? std::string_view(kWeirdKernel) : k == 1 ? "ampere_sgemm_128x64_tn" : "triton_poi_fused_0";
      kr.grid_x = 16 + k;
      kr.block_x = 128;
      kr.registers = 64;
      kr.static_smem = 1024;
      kr.dynamic_smem = k == 1 ? 16384 : 0;
      w.add(kr);
      ++corr;
    }
    // A graph launch: two nodes under one correlation.
    store::ApiCallRow glaunch;
    glaunch.pid = pid;
    glaunch.tid = tid;
    glaunch.name = "cudaGraphLaunch";
    glaunch.cbid = 311;
    glaunch.start = t0 + 310000;
    glaunch.end = t0 + 312000;
    glaunch.correlation = corr;
    w.add(glaunch);
    for (int node = 0; node < 2; ++node) {
      store::KernelRow g;
      g.pid = pid;
      g.context = 1;
      g.stream = 7;
      g.correlation = corr;
      g.start = t0 + 320000 + node * 3000;
      g.end = g.start + 2500;
      g.name = "graph_node_kernel";
      g.graph_id = 5;
      g.graph_node_id = 100 + node;
      w.add(g);
    }
    ++corr;

    store::ApiCallRow cpy;
    cpy.pid = pid;
    cpy.tid = tid;
    cpy.name = "cudaMemcpyAsync";
    cpy.cbid = 41;
    cpy.start = t0 + 52000;
    cpy.end = t0 + 58000;
    cpy.correlation = corr;
    w.add(cpy);
    store::MemcpyRow m;
    m.pid = pid;
    m.context = 1;
    m.stream = 7;
    m.correlation = corr;
    m.start = t0 + 55000;
    m.end = t0 + 60000;
    m.copy_kind = 1;
    m.src_kind = 1;
    m.dst_kind = 3;
    m.bytes = 65536;
    w.add(m);
    ++corr;
    store::MemcpyRow back = m;
    back.correlation = corr++;
    back.start = t0 + 700000;
    back.end = t0 + 701000;
    back.copy_kind = 2;
    back.src_kind = 3;
    back.dst_kind = 2;
    back.bytes = 40;
    w.add(back);
    store::MemcpyRow peer = m;
    peer.correlation = corr++;
    peer.start = t0 + 702000;
    peer.end = t0 + 703000;
    peer.copy_kind = 10;
    peer.src_kind = 3;
    peer.dst_kind = 3;
    peer.src_device = 0;
    peer.dst_device = 1;
    w.add(peer);
    store::MemsetRow ms;
    ms.pid = pid;
    ms.context = 1;
    ms.stream = 7;
    ms.correlation = corr++;
    ms.start = t0 + 704000;
    ms.end = t0 + 704000;  // zero length
    ms.bytes = 4096;
    ms.mem_kind = 3;
    w.add(ms);

    store::SyncRow sync;
    sync.pid = pid;
    sync.tid = tid;
    sync.type = 3;
    sync.context = 1;
    sync.stream = 7;
    sync.start = t0 + 800000;
    sync.end = t0 + 850000;
    sync.correlation = corr++;
    w.add(sync);

    store::MemoryEventRow alloc;
    alloc.pid = pid;
    alloc.device = 0;
    alloc.ts = t0 + 105000;
    alloc.source = 2;
    alloc.address = 139800000000000 + s;
    alloc.bytes = 1 << 20;
    alloc.total_allocated = 1 << 20;
    alloc.total_reserved = 2 << 20;
    w.add(alloc);
    store::MemoryEventRow freed = alloc;
    freed.op = 2;
    freed.ts = t0 + 880000;
    freed.total_allocated = 0;
    w.add(freed);
    store::MemoryEventRow cuda = alloc;
    cuda.source = 1;
    cuda.ts = t0 + 106000;
    cuda.total_allocated = kNull;
    cuda.total_reserved = kNull;
    cuda.correlation = 9999;
    w.add(cuda);

    store::CounterRow c;
    c.pid = pid;
    c.device = 0;
    c.name = "gpu_memory_used";
    c.ts = t0 + 106000;
    c.value = double(2 << 20);
    w.add(c);
    c.name = "nvml_sm_util_pct";
    c.value = 37.5;
    w.add(c);
    c.device = kNull;
    c.name = "host_rss_bytes";
    c.value = 1.5e9;
    w.add(c);
    ext += 2;
  }
  // A range the process never closed.
  store::RangeRow open;
  open.pid = pid;
  open.tid = tid2;
  open.source = 2;
  open.name = "never closed";
  open.start = 5000;
  open.depth = 0;
  w.add(open);

  if (opt.second_process) {
    const int64_t pid2 = 4200;
    store::ProcessRow q = p;
    q.pid = pid2;
    q.rank = 1;
    q.local_rank = 1;
    w.put(q);
    w.put(store::ThreadRow{pid2, pid2, "python3"});
    store::ApiCallRow api;
    api.pid = pid2;
    api.tid = pid2;
    api.name = "cudaLaunchKernel";
    api.cbid = 211;
    api.start = 20000;
    api.end = 25000;
    api.correlation = 1;  // same id as pid 4100's first launch: flows must stay apart
    w.add(api);
    store::KernelRow k;
    k.pid = pid2;
    k.device = 1;
    k.context = 1;
    k.stream = 7;
    k.correlation = 1;
    k.start = 40000;
    k.end = 52000;
    k.name = "ampere_sgemm_128x64_tn";
    w.add(k);
    w.add(store::StepRow{pid2, 0, 10000, 910000, 2});
  }
  w.connection().exec(
      "INSERT INTO graph_launch(pid, device, context, stream, graph_id, correlation, start, \"end\") "
      "SELECT pid, device, context, stream, graph_id, correlation, min(start), max(\"end\") FROM kernel "
      "WHERE graph_id IS NOT NULL GROUP BY pid, correlation, graph_id");
  w.commit();
  w.connection().exec("PRAGMA journal_mode=DELETE");
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

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
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

void write_file(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
}

std::string golden_mismatch(const std::string& golden_path, const std::string& actual) {
  if (std::getenv("GPUSCOPE_UPDATE_GOLDEN")) {
    write_file(golden_path, actual);
    return {};
  }
  std::string expected = read_file(golden_path);
  std::string actual_path = golden_path + ".actual";
  if (expected == actual) {
    fs::remove(actual_path);
    return {};
  }
  write_file(actual_path, actual);
  RunResult d = run("diff -u '" + golden_path + "' '" + actual_path + "' | head -80");
  return "golden mismatch: " + golden_path + " (actual written to " + actual_path +
         "; GPUSCOPE_UPDATE_GOLDEN=1 to accept)\n" + d.output;
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
