// libFuzzer entry point for everything that reads a recording: the bytes
// choose rows (kernels, copies, API calls, ops, ranges, steps, syncs, memory
// events, links, counters) with odd values — negative or reversed times, the
// int64 extremes, dangling ids, empty and strange names — written through
// the raw store::Writer (tests/support's builder would default the zeros away)
// into a fresh database, which is then analysed (every report
// format), exported to Chrome and Perfetto, diffed against itself and checked
// against a budget (`gpuscope diff` and `check`, every report format). Built with
// GPUSCOPE_FUZZ_VIEWER (tests/gui, where Qt is), the same recordings go through
// the viewer's loader instead. A database SQLite accepts must
// end in a report or in gpuscope::Error; anything else (a crash, undefined
// behaviour, another exception) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

#include "analyzer/analysis.h"
#include "analyzer/report/report.h"
#include "trace_formats/common/error.h"
#include "trace_formats/export/exporters.h"
#include "regress/diff.h"
#ifdef GPUSCOPE_FUZZ_VIEWER
#include "gui/model/loader.h"
#endif
#include "trace_formats/store/reader.h"
#include "trace_formats/store/writer.h"

namespace {

using namespace gpuscope;

class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool empty() const { return p_ == end_; }
  uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
  // Mostly small, ordered-looking values, sometimes negative, NULL, far out or
  // at the int64 limits.
  int64_t value() {
    switch (byte() & 15) {
      case 0: return 0;
      case 1: return -1 - byte();
      case 2: return std::numeric_limits<int64_t>::max() - byte();
      case 3: return std::numeric_limits<int64_t>::min() + byte();
      case 4: return store::kNull;
      case 5: {
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v = v << 8 | byte();
        return static_cast<int64_t>(v);
      }
      default: return static_cast<int64_t>(byte()) * 1000 + byte();
    }
  }
  int64_t small() { return byte() & 7; }
  std::string_view name() {
    static constexpr std::string_view kNames[] = {
        "",
        "ampere_sgemm_128x64_nn",
        "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
        "aten::addmm",
        "aten::copy_",
        "cudaLaunchKernel",
        "cudaStreamSynchronize",
        "cudaMemcpyAsync",
        "cudaMalloc",
        "Optimizer.step#SGD.step",
        "ProfilerStep#3",
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        "Torch-Compiled Region: 0/1",
        "TorchDynamo Cache Lookup",
        "CompiledFunctionBackward",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        "softmax_warp_forward<float, float, float, 10, false, false>",
        "\xff\xfe<script>\x01",
    };
    return kNames[byte() % std::size(kNames)];
  }
  std::string_view json() {
    static constexpr std::string_view kJson[] = {"", "[[32,128],[128]]", "[\"float\",\"c10::BFloat16\"]", "[[", "[]"};
    return kJson[byte() % std::size(kJson)];
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

void write_recording(const std::string& path, Bytes& in) {
  store::Writer w(path);
  w.begin();
  store::ProcessRow proc;
  proc.pid = 100 + in.small();
  proc.host = "fuzz";
  proc.cupti_status = "ok";
  w.put(proc);
  store::DeviceRow dev;
  dev.id = in.small();
  dev.name = "NVIDIA H200";
  dev.sm_count = in.value();
  dev.total_memory = in.value();
  w.put(dev);
  const auto pid = [&] { return 100 + (in.byte() & 1); };
  for (int rows = 0; rows < 400 && !in.empty(); ++rows) {
    switch (in.byte() % 12) {
      case 0: {
        store::KernelRow k;
        k.pid = pid(), k.device = in.small(), k.stream = in.small(), k.correlation = in.value();
        k.start = in.value(), k.end = in.value(), k.name = in.name();
        k.grid_x = in.value(), k.block_x = in.value(), k.graph_id = in.value();
        w.add(k);
        break;
      }
      case 1: {
        store::MemcpyRow m;
        m.pid = pid(), m.device = in.small(), m.stream = in.small(), m.correlation = in.value();
        m.start = in.value(), m.end = in.value(), m.copy_kind = in.value(), m.src_kind = in.value();
        m.dst_kind = in.value(), m.bytes = in.value();
        w.add(m);
        break;
      }
      case 2: {
        store::MemsetRow m;
        m.pid = pid(), m.device = in.small(), m.stream = in.small(), m.correlation = in.value();
        m.start = in.value(), m.end = in.value(), m.bytes = in.value();
        w.add(m);
        break;
      }
      case 3: {
        store::ApiCallRow a;
        a.pid = pid(), a.tid = in.small(), a.cbid = in.value(), a.name = in.name();
        a.start = in.value(), a.end = in.value(), a.correlation = in.value(), a.return_code = in.value();
        w.add(a);
        break;
      }
      case 4: {
        store::SyncRow s;
        s.pid = pid(), s.tid = in.value(), s.type = in.value(), s.stream = in.value();
        s.start = in.value(), s.end = in.value(), s.correlation = in.value();
        w.add(s);
        break;
      }
      case 5: {
        store::OpRow o;
        o.pid = pid(), o.tid = in.small(), o.name = in.name(), o.start = in.value(), o.end = in.value();
        o.depth = in.value(), o.seq_nr = in.value(), o.backward = in.value(), o.scope = in.value();
        o.shapes = in.json(), o.dtypes = in.json(), o.external_id = in.value();
        w.add(o);
        break;
      }
      case 6: {
        store::RangeRow r;
        r.pid = pid(), r.tid = in.small(), r.source = in.value(), r.kind = in.value(), r.name = in.name();
        r.start = in.value(), r.end = in.value(), r.depth = in.value();
        w.add(r);
        break;
      }
      case 7: {
        store::StepRow s;
        s.pid = pid(), s.number = in.value(), s.start = in.value(), s.end = in.value(), s.source = in.value();
        w.add(s);
        break;
      }
      case 8: {
        store::MemoryEventRow m;
        m.pid = pid(), m.device = in.value(), m.ts = in.value(), m.op = in.value(), m.source = in.value();
        m.bytes = in.value(), m.total_allocated = in.value(), m.total_reserved = in.value();
        w.add(m);
        break;
      }
      case 9: {
        store::ExternalCorrelationRow e;
        e.pid = pid(), e.correlation = in.value(), e.external_id = in.value();
        w.put(e);
        break;
      }
      case 10: {
        store::CounterRow c;
        c.pid = pid(), c.device = in.value(), c.name = in.name(), c.ts = in.value(), c.value = static_cast<double>(in.value());
        w.add(c);
        break;
      }
      default: {
        store::GraphLaunchRow g;
        g.pid = pid(), g.device = in.small(), g.graph_id = in.value(), g.correlation = in.value();
        g.start = in.value(), g.end = in.value();
        w.add(g);
        break;
      }
    }
  }
  w.commit();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gpuscope-recording-fuzz-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string db = (dir / "r.db").string();
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
  Bytes in(data, size);
  try {
    write_recording(db, in);
  } catch (const Error&) {
    return 0;  // rows the schema refuses (a constraint): not a reader's input
  }
#ifdef GPUSCOPE_FUZZ_VIEWER
  try {
    gui::Timeline timeline;
    gui::FindingsResult findings;
    gui::Loader::load_blocking(db, timeline, &findings);
  } catch (const Error&) {
  }
  return 0;
#endif
  try {
    store::Reader reader(db);
    analyzer::Analysis a = analyzer::analyze(reader, {});
    (void)analyzer::to_text(a), (void)analyzer::to_json(a), (void)analyzer::to_markdown(a), (void)analyzer::to_html(a);
  } catch (const Error&) {
  }
  try {
    auto base = regress::Recording::load(db, {}, 0), next = regress::Recording::load(db, {}, 0);
    regress::DiffResult d = regress::diff(base, next, {});
    (void)regress::to_text(d), (void)regress::to_json(d), (void)regress::to_markdown(d);
    (void)regress::to_junit(d), (void)regress::to_html(d);
    regress::Budget budget;
    budget.max_step_ms_median = 1.0, budget.max_step_ms_p95 = 2.0, budget.min_gpu_utilization = 0.5;
    budget.forbid_findings = {"host-sync", "amp"};
    regress::CheckResult c = regress::check(base, budget, "fuzz-budget");
    (void)regress::to_text(c), (void)regress::to_json(c), (void)regress::to_markdown(c), (void)regress::to_junit(c);
  } catch (const Error&) {
  }
  for (int format = 0; format < 2; ++format) {
    try {
      store::Reader reader(db);
      const std::string out = (dir / (format ? "t.pftrace" : "t.json")).string();
      fs::remove(out);
      if (format)
        formats::export_perfetto(reader, out, {});
      else
        formats::export_chrome(reader, out, {});
    } catch (const Error&) {
    }
  }
  return 0;
}
