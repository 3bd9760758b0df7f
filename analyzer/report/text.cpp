// The terminal report: summary, breakdown, idle causes, top 10 tables, memory,
// findings with their fix code. Plain ASCII layout, names made terminal-safe.
#include <algorithm>
#include <cstdio>

#include "analyzer/analysis.h"
#include "analyzer/report/report.h"
#include "analyzer/job_end.h"
#include "analyzer/report/format.h"
#include "analyzer/report/tried.h"

namespace gpuscope::analyzer {
namespace {

using namespace report;

// Said of the marked rank in the ranks table.
constexpr const char* kAnalysedRank = "the rank analysed in detail; pick another with --rank N";
constexpr const char* kStepRank = "the rank analyze details by default: savings are a share of its step";

std::string bar(double fraction, int width) {
  int n = static_cast<int>(fraction * width + 0.5);
  return std::string(static_cast<size_t>(std::clamp(n, 0, width)), '#');
}

void section(std::string& o, const char* title) {
  o += "\n";
  o += title;
  o += "\n";
}

void summary(std::string& o, const Analysis& a) {
  const Summary& s = a.summary;
  section(o, "Summary");
  o += "  wall time        " + format_fixed(static_cast<double>(s.wall_ns) / 1e9, 3) + " s analysed (recording " +
       format_fixed(static_cast<double>(s.recording_ns) / 1e9, 3) + " s)\n";
  o += "  steps            " + std::to_string(s.steps) + ": mean " + ms_unit(s.step_ms_mean) + ", median " +
       ms_unit(s.step_ms_median) + ", p95 " + ms_unit(s.step_ms_p95) + ", min " + ms_unit(s.step_ms_min) + ", max " +
       ms_unit(s.step_ms_max) + "\n";
  if (!s.outlier_steps.empty()) {
    std::string list;
    for (size_t i = 0; i < s.outlier_steps.size() && i < 12; ++i) list += (i ? ", " : "") + std::to_string(s.outlier_steps[i]);
    if (s.outlier_steps.size() > 12) list += ", ... (" + std::to_string(s.outlier_steps.size()) + ")";
    o += "  outlier steps    " + list + " (longer than 1.5x the median)\n";
  }
  if (s.device >= 0) {
    o += "  GPU utilization  " + format_percent(s.gpu_utilization) + " of step time busy on device " + std::to_string(s.device) + "\n";
    for (const auto& d : s.devices)
      if (d.id != s.device) o += "                   device " + std::to_string(d.id) + ": " + format_percent(d.utilization) + "\n";
    o += "  SM efficiency    " + format_percent(s.sm_efficiency) + " (estimated from grid sizes)\n";
    o += "  tensor cores     " + format_percent(s.tensor_core_share) + " of kernel time (by kernel name)\n";
  }
  o += "  events           " + std::to_string(s.kernels) + " kernels, " + std::to_string(s.memcpys) + " memcpy, " +
       std::to_string(s.memsets) + " memset, " + std::to_string(s.api_calls) + " API calls, " + std::to_string(s.ops) +
       " ops\n";
}

void breakdown(std::string& o, const Analysis& a) {
  section(o, "Step time breakdown (mean per step; each moment counted once, in this order)");
  const double n = std::max<double>(1, static_cast<double>(a.summary.steps));
  const double total = static_cast<double>(a.breakdown.total());
  for (int i = 0; i < Breakdown::kCategories; ++i) {
    const double v = static_cast<double>(a.breakdown.get(i));
    const double f = total > 0 ? v / total : 0;
    o += "  " + pad(Breakdown::category(i), 14) + lpad(format_fixed(v / 1e6 / n, 3), 10) + " ms " + lpad(format_percent(f), 8) + "  " +
         bar(f, 30) + "\n";
  }
}

void idle(std::string& o, const Analysis& a) {
  if (a.summary.device < 0) return;
  section(o, "GPU idle inside steps, by cause (mean per step)");
  for (const auto& c : a.idle.causes) {
    o += "  " + pad(idle_cause_name(c.cause), 16) + lpad(format_fixed(c.ms_per_step, 3), 10) + " ms " +
         lpad(format_fixed(c.pct_of_step, 1) + " %", 8) + "  " + std::to_string(c.gaps) + " gaps\n";
  }
}

void kernels(std::string& o, const Analysis& a) {
  if (a.top_kernels.empty()) return;
  section(o, "Top kernels (by total time)");
  o += "     total ms   share   count   mean us  TC  origin  name\n";
  for (const auto& k : a.top_kernels) {
    o += "  " + lpad(ms(k.total_ns), 11) + lpad(format_percent(k.share), 8) + lpad(std::to_string(k.count), 8) +
         lpad(format_fixed(k.mean_ns / 1e3, 1), 10) + (k.tensor_core ? "  TC  " : "  --  ") + pad(k.origin, 7) + " " +
         plain_text(k.name, 90) + "\n";
  }
}

void ops(std::string& o, const Analysis& a) {
  if (a.top_ops.empty()) return;
  section(o, "Top ops (by GPU time + self CPU time)");
  o += "     gpu ms  self cpu ms   count  name  [input shapes, dtypes]\n";
  for (const auto& p : a.top_ops) {
    std::string in = p.shapes.empty() && p.dtypes.empty() ? "" : "  " + plain_text(p.shapes, 60) + " " + plain_text(p.dtypes, 40);
    o += "  " + lpad(ms(p.gpu_ns), 9) + lpad(ms(p.self_cpu_ns), 13) + lpad(std::to_string(p.count), 8) + "  " +
         plain_text(p.name, 60) + in + "\n";
  }
}

void copies(std::string& o, const Analysis& a) {
  if (a.copies.empty()) return;
  section(o, "Memory copies and sets");
  for (const auto& c : a.copies) {
    std::string what = c.kind == "memset" ? "memset " + c.dst_kind : c.direction + " " + c.src_kind + " -> " + c.dst_kind;
    o += "  " + pad(what, 30) + lpad(std::to_string(c.count), 8) + "x " + lpad(format_bytes(static_cast<double>(c.bytes)), 10) +
         lpad(ms(c.total_ns), 11) + " ms " + lpad(format_fixed(c.gb_per_s, 1), 7) + " GB/s\n";
  }
}

void apis(std::string& o, const Analysis& a) {
  if (a.api_calls.empty()) return;
  section(o, "CUDA API calls (by total time)");
  for (const auto& c : a.api_calls) {
    o += "  " + pad(plain_text(c.name, 32), 32) + lpad(std::to_string(c.count), 9) + "x " + lpad(ms(c.total_ns), 11) +
         " ms  mean " + format_fixed(c.mean_ns / 1e3, 1) + " us" + (c.failed ? "  failed " + std::to_string(c.failed) : "") + "\n";
  }
}

void memory(std::string& o, const Analysis& a) {
  const MemorySummary& m = a.memory;
  if (!m.torch_allocator && !m.cuda_events && m.cuda_allocs == 0) return;
  section(o, "Memory");
  std::string cap = m.capacity > 0 ? " of " + format_bytes(static_cast<double>(m.capacity)) : "";
  if (m.torch_allocator)
    o += "  torch allocator  peak allocated " + format_bytes(static_cast<double>(m.peak_allocated)) + ", peak reserved " +
         format_bytes(static_cast<double>(m.peak_reserved)) + cap + "\n";
  if (m.cuda_events) o += "  CUDA allocations peak in use " + format_bytes(static_cast<double>(m.peak_device_used)) + cap + "\n";
  if (m.capacity > 0) o += "  peak / capacity  " + format_percent(m.peak_fraction) + "\n";
  o += "  churn            " + format_fixed(m.allocs_per_step, 1) + " cudaMalloc/cudaFree-level calls per step (" +
       std::to_string(m.cuda_allocs) + " allocs, " + std::to_string(m.cuda_frees) + " frees, " +
       std::to_string(m.failed_allocs) + " failed)\n";
}

void ranks(std::string& o, const Analysis& a, const char* marked = kAnalysedRank) {
  if (a.ranks.empty()) return;
  section(o, "Ranks (mean per step: waiting in collectives, loading data, computing, other)");
  const bool nccl = has_nccl_kernels(a.ranks);
  o += "  rank  host             pid      device  steps  median ms   p95 ms   GPU util  collective  data ms  compute ms";
  o += nccl ? "   NCCL ms  overlapped\n" : "\n";
  for (const auto& r : a.ranks) {
    o += std::string(r.analysed ? "* " : "  ") + pad(std::to_string(r.rank), 5) + " " + pad(plain_text(r.host, 16), 16) + " " +
         pad(std::to_string(r.pid), 8) + " " + lpad(r.device >= 0 ? std::to_string(r.device) : "-", 6) +
         lpad(std::to_string(r.steps), 7) + lpad(format_fixed(r.step_ms_median, 3), 11) + lpad(format_fixed(r.step_ms_p95, 3), 9) +
         lpad(r.gpu_utilization >= 0 ? format_percent(r.gpu_utilization) : "-", 11) + lpad(format_fixed(r.collective_ms_per_step, 3), 12) +
         lpad(format_fixed(r.data_ms_per_step, 3), 9) + lpad(format_fixed(r.compute_ms_per_step, 3), 12);
    if (nccl)
      o += r.comm_overlap_pct >= 0 ? lpad(format_fixed(r.communication_ms_per_step, 3), 10) + lpad(format_fixed(r.comm_overlap_pct, 1) + " %", 12)
                                   : lpad("-", 10) + lpad("-", 12);
    o += "\n";
  }
  if (nccl) o += "  (NCCL ms: NCCL kernel time per step; overlapped: its share with a compute kernel running, as HTA counts it)\n";
  o += std::string("  (* ") + marked + ")\n";
}

void indent_code(std::string& o, const std::string& code) {
  size_t start = 0;
  while (start < code.size()) {
    size_t nl = code.find('\n', start);
    if (nl == std::string::npos) nl = code.size();
    o += "        " + code.substr(start, nl - start) + "\n";
    start = nl + 1;
  }
}

void findings(std::string& o, const Analysis& a, const char* none = nullptr) {
  section(o, "Findings (ranked by estimated saving per step)");
  if (a.findings.empty()) {
    o += none ? std::string("  none: ") + none + "\n"
        : a.summary.device < 0 ? "  none: no GPU activity to analyse\n" : "  none: no rule found a saving worth reporting\n";
    return;
  }
  int i = 0;
  for (const auto& f : a.findings) {
    o += "\n  " + std::to_string(++i) + ". [" + severity_name(f.severity) + "] " + f.id + ": " + f.title + "\n";
    o += "     estimated saving " + ms_unit(f.saving_ms_per_step) + " per step (" + format_fixed(f.saving_pct, 1) + " %)";
    if (const std::string p = report::finding_prediction(f); !p.empty()) o += "; " + p;
    o += "\n     " + plain_text(f.evidence.summary) + "\n";
    for (const auto& c : f.evidence.top)
      o += "       - " + plain_text(c.name, 100) + ": " + format_fixed(c.total_ms, 3) + " ms, " + std::to_string(c.count) + "x" +
           (c.detail.empty() ? "" : " (" + plain_text(c.detail, 100) + ")") + "\n";
    if (!f.evidence.ranges.empty()) {
      o += "     where: ";
      for (size_t k = 0; k < f.evidence.ranges.size() && k < 3; ++k)
        o += (k ? "; " : "") + seconds(f.evidence.ranges[k].start_ns) + " " + plain_text(f.evidence.ranges[k].label, 80);
      o += "\n";
    }
    o += "     fix: " + f.fix.text + "\n";
    indent_code(o, f.fix.code);
  }
}

void plan(std::string& o, const Analysis& a) {
  const std::string check = report::whatif_check_line(a);
  if (check.empty()) return;
  section(o, "Plan (the what-if replay: each fix applied to the recorded steps, then the next)");
  o += "  " + plain_text(check) + "\n";
  for (const auto& line : report::plan_lines(a)) o += "  " + plain_text(line) + "\n";
}

// `gpuscope try --attach`: what each tried fix measured on this job, beside the prediction.
void tried(std::string& o, const Analysis& a) {
  if (a.tried.empty()) return;
  section(o, "Tried (gpuscope try: measured on the job, beside the replay's prediction)");
  for (const auto& t : a.tried) o += "  " + plain_text(tried_line(t)) + "\n";
}

}  // namespace

std::string to_text(const Analysis& a) {
  std::string o = "gpuscope analyze: " + plain_text(a.summary.recording) + "\n";
  if (const std::string job = job_end_line(a.summary); !job.empty()) o += "job: " + plain_text(job) + "\n";
  o += plain_text(report::scope_line(a)) + "\n" + plain_text(report::untraced_line(a)) + "\n";
  if (const std::string line = report::tracer_overhead_line(a); !line.empty()) o += plain_text(line) + "\n";
  summary(o, a);
  breakdown(o, a);
  idle(o, a);
  kernels(o, a);
  ops(o, a);
  copies(o, a);
  apis(o, a);
  memory(o, a);
  ranks(o, a);
  findings(o, a);
  plan(o, a);
  tried(o, a);
  if (!a.notes.empty()) {
    section(o, "Notes");
    o += text_list(a.notes);
  }
  return o;
}

std::string to_cross_rank_text(const Analysis& a) {
  std::string o = "gpuscope cluster: " + plain_text(a.summary.recording) + "\n" + plain_text(report::cross_rank_scope_line(a)) + "\n";
  ranks(o, a, kStepRank);
  findings(o, a, "no cross-rank finding worth reporting");
  if (!a.notes.empty()) {
    section(o, "Notes");
    o += text_list(a.notes);
  }
  return o;
}

}  // namespace gpuscope::analyzer
