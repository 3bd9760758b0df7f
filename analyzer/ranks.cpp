// Every rank of a distributed job, summarized, and the cross-rank findings.
#include "analyzer/ranks.h"

#include <algorithm>

#include "analyzer/rules/cross_rank.h"
#include "analyzer/steps.h"
#include "analyzer/untraced.h"
#include "trace_formats/common/error.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::analyzer {
namespace {

// The longest steps of a rank kept as time ranges.
constexpr size_t kSlowestSteps = 3;

struct RankedProcess {
  int64_t pid = 0, rank = 0;
  std::string host;
};

// The wait in collectives, as intervals. On the CPU (gloo): collective ops
// (`c10d::allreduce_`, which enqueues the work) and ranges (`gloo:all_reduce`,
// which torch opens on the ProcessGroup's worker thread at the enqueue and
// closes when every rank has contributed) on any thread of the process, less
// the time the process runs other ops or waits for data: what is left is the
// training thread blocked until the last rank arrives. Ops that enclose a
// collective (the autograd hook that launched it) do not count as other ops.
// On the GPU: NCCL kernel time during which no other kernel, copy or memset of
// the device runs (the exposed part).
IntervalSet collective_set(const Context& c) {
  const Model& m = c.m;
  std::vector<int8_t> memo((m.strings ? m.strings->size() : 0) + 1, -1);
  auto collective = [&](uint32_t id) {
    if (id >= memo.size() - 1) return false;
    if (memo[id] < 0) memo[id] = is_collective_name(m.str(id)) ? 1 : 0;
    return memo[id] == 1;
  };
  std::vector<Interval> cpu, work;
  std::vector<bool> encloses(m.ops.size(), false);
  for (uint32_t i = 0; i < m.ops.size(); ++i) {
    if (!collective(m.ops[i].name)) continue;
    cpu.push_back({m.ops[i].start, m.ops[i].end});
    for (uint32_t p = i < m.op_parent.size() ? m.op_parent[i] : kNone; p != kNone && !encloses[p]; p = m.op_parent[p])
      encloses[p] = true;
  }
  for (const auto& r : m.ranges)
    if (collective(r.name)) cpu.push_back({r.start, r.end});
  for (uint32_t i = 0; i < m.ops.size(); ++i)
    if (!encloses[i] && !collective(m.ops[i].name)) work.push_back({m.ops[i].start, m.ops[i].end});
  IntervalSet out = IntervalSet::from(std::move(cpu)).subtract(IntervalSet::from(std::move(work)).unite(c.dataloader));
  if (c.device < 0) return out;
  const auto dev = static_cast<uint16_t>(c.device);
  std::vector<Interval> comm, busy;
  for (const auto& k : m.kernels) {
    if (k.device != dev) continue;
    (c.kc(k.name).has(kCommunication) ? comm : busy).push_back({k.start, k.end()});
  }
  for (const auto& x : m.copies)
    if (x.device == dev) busy.push_back({x.start, x.end()});
  const IntervalSet exposed = IntervalSet::from(std::move(comm)).subtract(IntervalSet::from(std::move(busy)));
  return out.unite(exposed);
}

}  // namespace

bool is_collective_name(std::string_view n) {
  return n.starts_with("c10d::") || n.starts_with("gloo:") || n.starts_with("nccl:") || n.starts_with("mpi:") ||
         n.starts_with("ucc:");
}

RankSummary summarize_rank(const Context& c) {
  RankSummary r;
  r.pid = c.m.pid;
  r.device = c.device;
  r.steps = static_cast<int64_t>(c.steps.size());
  if (c.steps.empty()) return r;
  std::vector<double> ms;
  for (const auto& s : c.steps) ms.push_back(static_cast<double>(s.duration()) / 1e6);
  r.step_ms_median = median(ms);
  r.step_ms_p95 = percentile(ms, 95);
  if (c.device >= 0) {
    int64_t busy = 0;
    for (const auto& b : c.step_breakdown) busy += b.kernel + b.memcpy + b.memset + b.communication;
    r.gpu_utilization = c.step_ns > 0 ? static_cast<double>(busy) / static_cast<double>(c.step_ns) : 0;
  }
  // Each moment once, in priority order: collective, data, compute, other.
  const IntervalSet coll = collective_set(c);
  const IntervalSet with_data = coll.unite(c.dataloader);
  const IntervalSet with_compute = with_data.unite(c.gpu_busy).unite(c.op_busy);
  int64_t t_coll = 0, t_data = 0, t_compute = 0, t_step = 0;
  std::vector<double> own, wait;
  for (const auto& s : c.steps) {
    const int64_t a = coll.covered(s.start, s.end), b = with_data.covered(s.start, s.end),
                  k = with_compute.covered(s.start, s.end);
    own.push_back(static_cast<double>(s.duration() - a) / 1e6);
    wait.push_back(static_cast<double>(a) / 1e6);
    t_coll += a;
    t_data += b - a;
    t_compute += k - b;
    t_step += s.duration();
  }
  const double n = c.n_steps;
  r.collective_ms_per_step = static_cast<double>(t_coll) / 1e6 / n;
  r.data_ms_per_step = static_cast<double>(t_data) / 1e6 / n;
  r.compute_ms_per_step = static_cast<double>(t_compute) / 1e6 / n;
  r.other_ms_per_step = static_cast<double>(t_step - t_coll - t_data - t_compute) / 1e6 / n;
  r.own_ms_median = median(own);
  r.collective_ms_median = median(wait);
  if (c.device >= 0) {
    // How much of the communication compute hides (HTA's comm_comp_overlap):
    // the analysed steps' NCCL kernels against its other kernels.
    std::vector<Interval> comm, compute;
    for (uint32_t i : c.kernels) {
      const KernelRec& k = c.m.kernels[i];
      (c.kc(k.name).has(kCommunication) ? comm : compute).push_back({k.start, k.end()});
    }
    const IntervalSet comm_set = IntervalSet::from(std::move(comm));
    if (const int64_t comm_ns = comm_set.total(); comm_ns > 0) {
      r.communication_ms_per_step = static_cast<double>(comm_ns) / 1e6 / n;
      r.comm_overlap_pct = 100.0 * static_cast<double>(comm_set.intersect(IntervalSet::from(std::move(compute))).total()) /
                           static_cast<double>(comm_ns);
    }
  }
  std::vector<size_t> order(c.steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return c.steps[x].duration() > c.steps[y].duration(); });
  for (size_t i = 0; i < order.size() && i < kSlowestSteps; ++i) {
    const auto& s = c.steps[order[i]];
    r.slowest.push_back({s.start, s.end, "step " + std::to_string(s.number) + ", " + std::to_string(s.duration() / 1000) + " us"});
  }
  return r;
}

namespace {

std::vector<RankedProcess> ranked_processes(store::Reader& reader) {
  std::vector<RankedProcess> procs;
  using P = store::rec::Process;
  store::Cursor<P> p(reader.db(), {P::kPid, P::kRank, P::kHost}, "WHERE rank IS NOT NULL ORDER BY rank, pid");
  while (p.next()) procs.push_back({p->pid, p->rank, std::string(p->host)});
  return procs;
}

// A process loaded and summarized on its own (every rank analyze does not detail).
RankPass::Process summarize_process(store::Reader& reader, const Options& options, int64_t pid) {
  Options opt = options;
  opt.pid = pid;
  opt.rank.reset();
  opt.device.reset();
  opt.progress = false;
  RankPass::Process out;
  try {
    LoadedProcess lp;
    load_process(reader, opt, lp);
    Context c = build_context(lp.m, lp.plan, lp.device, [&] { link_model(lp.m); });
    out.summary = summarize_rank(c);
    // The step times analyze's summary would have (fill_summary, measure_untraced).
    Analysis as_analysed;
    Summary& s = as_analysed.summary;
    if (!c.steps.empty()) {
      double sum = 0;
      for (const auto& st : c.steps) sum += static_cast<double>(st.duration()) / 1e6;
      s.step_ms_mean = sum / static_cast<double>(c.steps.size());
    }
    s.step_source = lp.plan.source;
    measure_untraced(as_analysed, lp.plan, lp.m.imported);
    out.step_ms_mean = s.step_ms_mean;
    out.untraced_step_ms = s.untraced_step_ms;
  } catch (const std::exception& e) {
    // A rank with nothing to analyse (it wrote no events, --steps selects
    // none of its steps) is listed without steps.
    out.summary = RankSummary{};
    out.summary.pid = pid;
    out.error = e.what();
  }
  return out;
}

std::string rank_note(const RankSummary& r, const std::string& error) {
  return "rank " + std::to_string(r.rank) + " (pid " + std::to_string(r.pid) + "): " + error;
}

void add_cross_rank_findings(Analysis& a) {
  const CrossRankInput in{a.ranks, a};
  std::vector<Finding> found;
  for (const CrossRankRule* rule : cross_rank_rules())
    if (auto f = rule->evaluate(in)) found.push_back(std::move(*f));
  for (auto& f : found) a.findings.push_back(std::move(f));
}

// Whether `c` (of a later file) is analyze's pick over `best` in the merged
// file: the lower tier, then the larger value; of equal values the first row,
// which for the collector's counts (tier 1, rows in file order) is the earlier
// file's and for the others (grouped by pid) the smaller pid's.
bool picked_over(const PidChoice& c, const PidChoice& best) {
  if (c.tier != best.tier) return c.tier < best.tier;
  if (c.value != best.value) return c.value > best.value;
  return c.tier != 1 && c.pid < best.pid;
}

}  // namespace

void analyze_ranks(store::Reader& reader, const Options& options, const Context& analysed, Analysis& a) {
  const std::vector<RankedProcess> procs = ranked_processes(reader);
  if (procs.size() < 2) return;
  for (const auto& p : procs) {
    RankSummary r;
    if (p.pid == a.summary.pid) {
      r = summarize_rank(analysed);
      r.analysed = true;
    } else {
      RankPass::Process other = summarize_process(reader, options, p.pid);
      r = std::move(other.summary);
      r.rank = p.rank;
      if (!other.error.empty()) a.notes.push_back(rank_note(r, other.error));
    }
    r.rank = p.rank;
    r.host = p.host;
    a.ranks.push_back(std::move(r));
  }
  add_cross_rank_findings(a);
}

RankPass rank_pass(store::Reader& reader, const Options& options) {
  RankPass pass;
  for (const auto& p : ranked_processes(reader)) {
    RankPass::Process r = summarize_process(reader, options, p.pid);
    r.summary.rank = p.rank;
    r.summary.host = p.host;
    pass.ranks.push_back(std::move(r));
  }
  std::vector<int64_t> pids;
  {
    store::Cursor<store::rec::Process> p(reader.db(), {store::rec::Process::kPid}, "ORDER BY pid");
    while (p.next()) pids.push_back(p->pid);
  }
  pass.choice = choose_default_pid(reader.db(), pids, std::nullopt);
  const bool ranked = std::any_of(pass.ranks.begin(), pass.ranks.end(),
                                  [&](const RankPass::Process& r) { return r.summary.pid == pass.choice.pid; });
  if (!ranked) {
    pass.chosen = summarize_process(reader, options, pass.choice.pid);
    pass.chosen.summary.rank = -1;
  }
  return pass;
}

Analysis cross_rank_report(const std::vector<RankPass>& passes) {
  const RankPass* best = nullptr;
  for (const RankPass& p : passes)
    if (!best || picked_over(p.choice, best->choice)) best = &p;
  Analysis a;
  size_t total = 0;
  for (const RankPass& p : passes) total += p.ranks.size();
  if (total < 2)
    throw Error("a cross-rank report needs at least two ranks (got " + std::to_string(total) + ")");
  const RankPass::Process* chosen = &best->chosen;
  for (const RankPass::Process& r : best->ranks)
    if (r.summary.pid == best->choice.pid) chosen = &r;
  if (!chosen->error.empty()) throw Error(chosen->error);

  std::vector<const RankPass::Process*> all;
  for (const RankPass& p : passes)
    for (const RankPass::Process& r : p.ranks) all.push_back(&r);
  std::stable_sort(all.begin(), all.end(), [](const auto* x, const auto* y) {
    return x->summary.rank != y->summary.rank ? x->summary.rank < y->summary.rank : x->summary.pid < y->summary.pid;
  });
  for (const RankPass::Process* r : all) {
    a.ranks.push_back(r->summary);
    a.ranks.back().analysed = r == chosen;
    if (!r->error.empty()) a.notes.push_back(rank_note(r->summary, r->error));
  }
  Summary& s = a.summary;
  s.pid = chosen->summary.pid;
  s.step_ms_mean = s.traced_step_ms = chosen->step_ms_mean;
  s.untraced_step_ms = chosen->untraced_step_ms;
  add_cross_rank_findings(a);
  judge_against_untraced(a);
  return a;
}

}  // namespace gpuscope::analyzer
