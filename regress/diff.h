// The public face of gs_regress: `gpuscope diff` (two recordings, is the new
// one slower beyond noise and the threshold, and what changed) and
// `gpuscope check` (one recording against absolute limits). Both build on
// gs_analyzer's analyze(); reports render as text, Markdown, JUnit XML, JSON
// and HTML. Exit codes: 0 pass, 1 regression / budget exceeded, 2 bad input.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis.h"
#include "regress/stats.h"

namespace gpuscope::formats {
class OpenedRecording;
}

namespace gpuscope::regress {

// The JSON reports' versions (docs/ci.md); bump when a field changes meaning.
inline constexpr const char* kDiffSchema = "gpuscope-diff/1";
inline constexpr const char* kCheckSchema = "gpuscope-check/1";

// Fewer analysed steps than this and no test can tell a change from noise.
inline constexpr int64_t kMinSteps = 5;

// One recording, analysed. A trace (formats::open_recording: torch.profiler
// JSON) is imported into a temporary database first, which lives as long as
// the Recording.
class Recording {
 public:
  // Throws Error("<path>: <problem>") for unreadable input, an empty recording,
  // one without steps or with fewer than kMinSteps analysed steps (min_steps 0: any).
  static Recording load(const std::string& path, const analyzer::Options& options, int64_t min_steps = kMinSteps);

  Recording(Recording&&) noexcept;
  Recording& operator=(Recording&&) noexcept;
  ~Recording();

  const std::string& path() const;
  const std::string& db_path() const;  // path() or the imported copy
  bool imported() const;
  const analyzer::Analysis& analysis() const { return analysis_; }
  std::vector<double> step_ms() const;
  // Per analysed step, the ms each named kernel ran on the analysed device
  // (kernels counted in the step their start falls in, as the analyzer does).
  std::vector<std::vector<double>> kernel_step_ms(const std::vector<std::string>& names) const;

 private:
  Recording();
  std::unique_ptr<formats::OpenedRecording> file_;
  analyzer::Analysis analysis_;
};

struct DiffOptions {
  double threshold = 0.05;  // relative step-time shift that counts as a regression
  double alpha = 0.01;      // significance level of the one-sided tests
  int top = 10;             // rows in the "top changes" tables
};

// Parses "5%", "5 %", "5" (all percent) into a fraction; throws Error.
double parse_percent(const std::string& text, const std::string& option);

enum class Status { kAdded, kRemoved, kGrown, kShrunk, kUnchanged };
const char* status_name(Status s);  // "added", "removed", "grown", "shrunk", "unchanged"

// A kernel's, op's or copy kind's time per step in both recordings.
struct Change {
  std::string kind;  // "kernel", "op", or in the top changes also "memcpy" / "memset"
  std::string name;
  std::string origin;  // kernels: cuBLAS, ATen, ...
  Status status = Status::kUnchanged;
  double base_ms = 0, new_ms = 0, delta_ms = 0;  // per analysed step
  double base_count = 0, new_count = 0;          // per analysed step
  // Ops: the two parts of their time (GPU time of their kernels, self CPU time).
  double base_gpu_ms = 0, new_gpu_ms = 0, base_cpu_ms = 0, new_cpu_ms = 0;
  std::optional<double> delta_pct;  // relative to base; none when added
  std::optional<double> share;      // delta over the median step-time change, when that change is significant
  std::optional<double> p_value;    // two-sided Mann-Whitney over per-step times (kernels ranked high enough)
  bool significant = false;
};

// Memcpy / memset volume by kind, direction and memory kinds.
struct CopyChange {
  std::string label;  // "memcpy HtoD pageable->device", "memset device"
  double base_bytes = 0, new_bytes = 0;  // per step
  double base_ms = 0, new_ms = 0;        // per step
  double base_count = 0, new_count = 0;  // per step
};

// A scalar compared across recordings (peak memory, utilization, breakdown).
struct MetricChange {
  std::string name, unit;  // unit: "ms", "bytes", "fraction", "count"
  double base = 0, next = 0;
};

struct FindingChange {
  std::string id, title;
  std::string status;  // "appeared", "gone", "persists"
  std::optional<double> base_saving_pct, new_saving_pct;
  std::string severity;  // in the recording that has it (new when both)
};

struct SideSummary {
  std::string recording;  // file name as given
  std::string device_name;
  std::string step_source;
  int64_t steps = 0, warmup_skipped = 0;
  double median_ms = 0, p95_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0;
  int64_t outliers = 0;
  std::vector<double> step_ms;
};

// What moved with a significant step-time change, one line each: the first
// kernel, op, copy kind and step-time category (kernel, memcpy, ..., idle)
// that moved its way by at least kMinCauseShare of the change.
inline constexpr double kMinCauseShare = 0.10;
struct Cause {
  std::string kind;  // "kernel", "op", "memcpy", "memset", "breakdown"
  std::string name;  // breakdown: the category, e.g. "dataloader"
  double delta_ms = 0;
  double share = 0;
};

enum class Verdict { kRegression, kImprovement, kWithinThreshold, kNoChange };
const char* verdict_name(Verdict v);  // "regression", "improvement", "within_threshold", "no_change"

struct DiffResult {
  DiffOptions options;
  SideSummary base, next;
  ShiftTest test;
  Verdict verdict = Verdict::kNoChange;
  double median_change = 0, p95_change = 0;  // relative
  std::vector<Change> kernels, ops;          // every name, by contribution
  std::vector<Change> top;                   // kernels, ops and copies together, the top `options.top` that changed
  std::vector<CopyChange> copies;
  std::vector<MetricChange> metrics;  // utilization, memory peaks, counts
  std::vector<MetricChange> breakdown;  // ms per step by category
  std::vector<FindingChange> findings;
  std::vector<Cause> causes;  // empty without a significant step-time change
  std::vector<std::string> notes;
  std::string headline;  // the verdict in one sentence
  int exit_code() const { return verdict == Verdict::kRegression ? 1 : 0; }
};

DiffResult diff(const Recording& base, const Recording& next, const DiffOptions& options);

std::string to_text(const DiffResult& d);
std::string to_markdown(const DiffResult& d);
std::string to_junit(const DiffResult& d);
std::string to_json(const DiffResult& d);
std::string to_html(const DiffResult& d);

// `gpuscope check`: limits without a baseline.
struct Budget {
  std::optional<double> max_step_ms_median, max_step_ms_p95;
  std::optional<int64_t> max_peak_memory_bytes;
  std::optional<double> min_gpu_utilization;  // fraction
  std::vector<std::string> forbid_findings;   // rule ids
};

// Parses budget JSON text; unknown keys, wrong types and unknown rule ids throw
// Error("<source>: <problem>") so that a typo never disables a gate.
Budget parse_budget(const std::string& json_text, const std::string& source);
Budget load_budget(const std::string& path);

struct BudgetCheck {
  std::string name;    // "max_step_ms_median", ..., "forbid_findings: host-sync"
  std::string limit;   // as text, with unit
  std::string actual;  // as text, with unit
  bool pass = true;
  std::string detail;  // why it failed, or what was measured
  double limit_value = 0, actual_value = 0;  // ms, bytes, fraction; findings: 0 allowed, 1 present
};

struct CheckResult {
  std::string recording, budget;
  SideSummary run;
  std::vector<BudgetCheck> checks;
  std::vector<std::string> notes;
  bool pass() const;
  int exit_code() const { return pass() ? 0 : 1; }
};

// Throws Error when a limit cannot be evaluated (peak memory with no memory recorded).
CheckResult check(const Recording& run, const Budget& budget, const std::string& budget_name);

std::string to_text(const CheckResult& c);
std::string to_markdown(const CheckResult& c);
std::string to_junit(const CheckResult& c);
std::string to_json(const CheckResult& c);

}  // namespace gpuscope::regress
