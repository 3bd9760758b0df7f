#include "cli/try_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "regress/stats.h"
#include "report/format.h"
#include "trace_formats/common/text.h"

namespace gpuscope::cli::try_report {
namespace {

using nlohmann::ordered_json;

double r3(double v) { return std::round(v * 1000) / 1000; }
double r2(double v) { return std::round(v * 100) / 100; }

std::vector<std::vector<double>> steady_by_round(const VariantResult& v) {
  std::vector<std::vector<double>> out;
  for (const auto& r : v.runs) {
    const bool counts = r && (r->end == try_run::End::kMeasured || r->end == try_run::End::kShort);
    out.push_back(counts ? r->steady_ms : std::vector<double>{});
  }
  return out;
}

bool counts(const std::optional<try_run::Result>& r) {
  return r && (r->end == try_run::End::kMeasured || r->end == try_run::End::kShort) && !r->steady_ms.empty();
}

void fill(VariantResult& v) {
  std::vector<double> all;
  const nlohmann::json* hook = nullptr;
  for (const auto& r : v.runs) {
    if (!r) continue;
    if (r->hook.is_object()) hook = &r->hook;
    if (r->end == try_run::End::kFailed || r->end == try_run::End::kTimedOut) {
      if (v.why.empty()) v.why = r->why, v.state = "failed";
    } else if (r->end == try_run::End::kNotApplied) {
      if (v.why.empty()) v.why = r->why, v.state = "not-applied";
    } else if ((r->end == try_run::End::kMeasured || r->end == try_run::End::kShort) && !r->steady_ms.empty()) {
      all.insert(all.end(), r->steady_ms.begin(), r->steady_ms.end());
    } else if (r->end == try_run::End::kShort && v.why.empty()) {
      v.why = r->why;
    }
  }
  if (hook && hook->contains("fixes")) {
    std::vector<std::string> nothing;
    for (const auto& f : (*hook)["fixes"]) {
      const std::string state = f.value("state", "");
      if (state == "applied") v.applied.push_back(f.value("said", ""));
      else if (state == "not-applied") nothing.push_back(f.value("fix", ""));
    }
    if (hook->contains("notes"))
      for (const auto& n : (*hook)["notes"])
        if (n.is_string()) v.notes.push_back(n.get<std::string>());
    for (const auto& f : nothing) v.notes.push_back(f + ": nothing to change in this job (no module with parameters, "
                                                        "optimizer or DataLoader it applies to was seen)");
    if (v.state == "not-run" && !v.variant.fixes.empty() && nothing.size() == v.variant.fixes.size()) {
      v.state = "not-applied";
      v.why = v.notes.back();
      all.clear();
    }
  }
  if (v.state == "not-run" && !all.empty()) {
    v.state = "measured";
    v.why.clear();
    v.median_ms = regress::median_of(all);
    v.p10_ms = regress::percentile_of(all, 10);
    v.p90_ms = regress::percentile_of(all, 90);
  } else if (v.state == "not-run" && v.why.empty()) {
    bool interrupted = false;
    for (const auto& r : v.runs) interrupted = interrupted || (r && r->end == try_run::End::kInterrupted);
    v.why = interrupted ? "interrupted before a run was measured" : "not run";
  }
}

std::string signed1(double pct) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f", pct);
  return b;
}

std::string range_text(double lo, double hi) { return "(" + signed1(lo) + ".." + signed1(hi) + " %)"; }

ordered_json run_json(const std::optional<try_run::Result>& r, size_t round) {
  if (!r) return ordered_json{{"round", round + 1}, {"end", "not-run"}};
  ordered_json j{{"round", round + 1},
                 {"end", try_run::end_name(r->end)},
                 {"why", r->why.empty() ? ordered_json(nullptr) : ordered_json(r->why)},
                 {"steps_seen", r->step_ms.size()},
                 {"warmup_steps", r->warmup},
                 {"settled", r->settled},
                 {"steady_steps", r->steady_ms.size()},
                 {"median_ms", r->steady_ms.empty() ? ordered_json(nullptr) : ordered_json(r3(regress::median_of(r->steady_ms)))},
                 {"first_step_s", r3(r->first_step_s)},
                 {"wall_s", r3(r->wall_s)}};
  ordered_json steady = ordered_json::array();
  for (double ms : r->steady_ms) steady.push_back(r3(ms));
  j["steady_ms"] = steady;
  return j;
}

ordered_json variant_json(const VariantResult& v, bool baseline) {
  ordered_json runs = ordered_json::array();
  for (size_t i = 0; i < v.runs.size(); ++i) runs.push_back(run_json(v.runs[i], i));
  const bool measured = v.state == "measured";
  ordered_json j{{"variant", baseline ? "" : v.variant.name()},
                 {"fixes", v.variant.fixes},
                 {"state", v.state},
                 {"why", v.why.empty() ? ordered_json(nullptr) : ordered_json(v.why)},
                 {"applied", v.applied},
                 {"notes", v.notes},
                 {"step_ms", measured ? ordered_json(r3(v.median_ms)) : ordered_json(nullptr)},
                 {"p10_ms", measured ? ordered_json(r3(v.p10_ms)) : ordered_json(nullptr)},
                 {"p90_ms", measured ? ordered_json(r3(v.p90_ms)) : ordered_json(nullptr)}};
  if (baseline) {
    j["extra_rounds"] = v.extra_rounds;
    j["extra_rounds_why"] = v.extra_why.empty() ? ordered_json(nullptr) : ordered_json(v.extra_why);
    j["runs"] = runs;
    return j;
  }
  if (v.cmp) {
    j["saving_pct"] = r2(v.cmp->saving_pct);
    j["saving_range_pct"] = ordered_json::array({r2(v.cmp->low_pct), r2(v.cmp->high_pct)});
    j["p_value"] = v.cmp->p_value;
    j["significant"] = v.cmp->significant;
  } else {
    j["saving_pct"] = nullptr;
    j["saving_range_pct"] = nullptr;
    j["p_value"] = nullptr;
    j["significant"] = nullptr;
  }
  if (v.variant.predicted) {
    const auto& p = *v.variant.predicted;
    j["predicted"] = ordered_json{{"saving_pct", r2(p.saving_pct)},
                                  {"range_pct", ordered_json::array({r2(p.low_pct), r2(p.high_pct)})},
                                  {"from", p.from}};
  } else {
    j["predicted"] = nullptr;
  }
  j["within_range"] = v.within_range ? ordered_json(*v.within_range) : ordered_json(nullptr);
  ordered_json outliers = ordered_json::array();
  if (v.cmp)
    for (size_t r : v.cmp->outliers) outliers.push_back(r + 1);
  j["outlier_rounds"] = outliers;
  j["extra_rounds"] = v.extra_rounds;
  j["extra_rounds_why"] = v.extra_why.empty() ? ordered_json(nullptr) : ordered_json(v.extra_why);
  j["runs"] = runs;
  return j;
}

}  // namespace

std::string more_rounds_why(const TryResult& t, const VariantResult& v) {
  if (v.variant.fixes.empty() || v.runs.size() < t.rounds) return "";
  for (const auto& r : v.runs)
    if (!counts(r)) return "";  // failed, not applied, interrupted or not run: no more of it
  const auto c = try_stats::compare(steady_by_round(t.baseline), steady_by_round(v), t.alpha);
  return try_stats::more_rounds_why(c, t.rounds);
}

void summarize(TryResult& t) {
  fill(t.baseline);
  const auto base = steady_by_round(t.baseline);
  for (auto& v : t.variants) {
    fill(v);
    if (v.state != "measured" || t.baseline.state != "measured") continue;
    v.cmp = try_stats::compare(base, steady_by_round(v), t.alpha);
    if (v.variant.predicted)
      v.within_range = v.cmp->high_pct >= v.variant.predicted->low_pct && v.cmp->low_pct <= v.variant.predicted->high_pct;
  }
}

nlohmann::ordered_json to_json(const TryResult& t) {
  ordered_json variants = ordered_json::array();
  for (const auto& v : t.variants) variants.push_back(variant_json(v, false));
  return ordered_json{{"schema", kSchema},
                      {"command", t.command},
                      {"steps", t.steps},
                      {"rounds", t.rounds},
                      {"max_rounds", t.max_rounds},
                      {"spread_limit_pts", try_stats::kSpreadLimitPts},
                      {"warmup_max", t.warmup_max},
                      {"from", t.from.empty() ? ordered_json(nullptr) : ordered_json(t.from)},
                      {"gpu", t.gpu},
                      {"torch", t.torch},
                      {"device", t.device},
                      {"collector", t.collector ? "dormant" : "none"},
                      {"alpha", t.alpha},
                      {"runs_planned", t.runs_planned},
                      {"runs_done", t.runs_done},
                      {"interrupted", t.interrupted},
                      {"wall_s", r3(t.wall_s)},
                      {"baseline", variant_json(t.baseline, true)},
                      {"variants", variants},
                      {"not_tried", t.not_tried}};
}

std::string to_text(const TryResult& t) {
  std::string out;
  std::string cmd;
  for (const auto& a : t.command) cmd += (cmd.empty() ? "" : " ") + a;
  out += "gpuscope try: " + plain_text(cmd, 120) + "\n";
  out += "  " + std::to_string(t.steps) + " steady steps per run, " + std::to_string(t.rounds) + (t.rounds == 1 ? " round; " : " rounds alternated; ") +
         std::to_string(t.runs_done) + " of " + std::to_string(t.runs_planned) + " runs done in " +
         format_fixed(t.wall_s, 1) + " s" + (t.gpu.empty() ? (t.device.empty() ? "" : ", on " + plain_text(t.device)) : ", " + plain_text(t.gpu)) +
         (t.torch.empty() ? "" : ", torch " + plain_text(t.torch)) + "\n";
  if (t.interrupted) out += "  interrupted: what was measured so far\n";
  out += "\n";
  const bool predictions = !t.from.empty();
  out += report::pad("variant", 26) + report::pad("step ms (p10-p90)", 24) + report::pad("saving (rounds)", 26) +
         report::pad("p", 11) + (predictions ? "predicted" : "") + "\n";
  const auto step = [](const VariantResult& v) {
    return format_fixed(v.median_ms, 2) + " (" + format_fixed(v.p10_ms, 2) + "-" + format_fixed(v.p90_ms, 2) + ")";
  };
  out += report::pad("as it is", 26) +
         (t.baseline.state == "measured" ? step(t.baseline) : t.baseline.state + ": " + plain_text(t.baseline.why)) + "\n";
  for (const auto& v : t.variants) {
    std::string line = report::pad(plain_text(v.variant.name()), 26);
    if (v.state == "measured") {
      line += report::pad(step(v), 24);
      if (v.cmp) {
        line += report::pad(report::plus_percent(v.cmp->saving_pct, 1) + " " + range_text(v.cmp->low_pct, v.cmp->high_pct), 26);
        line += report::pad(report::p_value(v.cmp->p_value) + (v.cmp->significant ? " *" : ""), 11);
      } else {
        line += report::pad("-", 26) + report::pad("", 11);
      }
      if (predictions) {
        if (v.variant.predicted) {
          const auto& p = *v.variant.predicted;
          line += report::plus_percent(p.saving_pct, 1) + " " + range_text(p.low_pct, p.high_pct);
          if (v.within_range) line += *v.within_range ? "  within range" : "  outside range";
        } else {
          line += "not priced";
        }
      }
    } else {
      line += (v.state == "not-applied" ? "not applied: " : v.state == "failed" ? "failed: " : "not measured: ") +
              plain_text(v.why);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out += "\n  saving: 1 - variant/as it is, the median of the rounds' step medians (their smallest..largest); "
         "p: one-sided Mann-Whitney over the steady steps, * when p < " +
         format_fixed(t.alpha, 2) + " and every round agrees\n";
  std::vector<std::string> extra;
  for (const auto& v : t.variants) {
    std::string line;
    if (v.extra_rounds > 0)
      line = v.variant.name() + ": " + std::to_string(v.extra_rounds) + " more round" + (v.extra_rounds == 1 ? "" : "s") +
             " (" + std::to_string(t.rounds + v.extra_rounds) + " in all) with the job as it is: " + v.extra_why;
    if (v.cmp && !v.cmp->outliers.empty()) {
      std::string rounds;
      for (size_t r : v.cmp->outliers)
        rounds += (rounds.empty() ? "" : ", ") + std::to_string(r + 1) + " (" + signed1(*v.cmp->round_savings[r]) + " %)";
      line += std::string(line.empty() ? v.variant.name() + ": " : "; ") + "round" +
              (v.cmp->outliers.size() == 1 ? " " : "s ") + rounds + " far from the others: left out of p";
    } else if (v.extra_rounds > 0 && v.cmp) {
      line += "; now " + range_text(v.cmp->low_pct, v.cmp->high_pct);
    }
    if (!line.empty()) extra.push_back(plain_text(line));
  }
  if (!extra.empty())
    out += "\nextra rounds (a variant whose rounds' savings spread over more than " + format_fixed(try_stats::kSpreadLimitPts, 0) +
           " points runs again, alternated with the job as it is, up to " + std::to_string(t.max_rounds) +
           " rounds; its saving is the median of its rounds, each against the run as it is just before it):\n" +
           report::text_list(extra);
  std::vector<std::string> applied;
  for (const auto& v : t.variants)
    for (const auto& a : v.applied) applied.push_back(v.variant.name() + " -> " + a);
  if (!applied.empty()) out += "\napplied:\n" + report::text_list(applied);
  std::vector<std::string> notes;
  for (const auto& v : t.variants)
    for (const auto& n : v.notes) notes.push_back(v.variant.name() + ": " + n);
  for (const auto& v : t.variants)
    for (const auto& f : v.variant.fixes)
      if (f == "cuda-graphs") {
        notes.push_back(v.variant.name() + ": cuda-graphs is torch.compile(mode=\"reduce-overhead\"): it includes compile");
        break;
      }
  if (!notes.empty()) out += "\nnotes:\n" + report::text_list(notes);
  if (!t.not_tried.empty()) out += "\nnot tried:\n" + report::text_list(t.not_tried);
  return out;
}

std::vector<std::string> history_lines(const TryResult& t, long long utc_s) {
  std::vector<std::string> lines;
  for (const auto& v : t.variants) {
    if (!v.cmp) continue;
    ordered_json j{{"time_utc_s", utc_s},
                   {"gpu", t.gpu},
                   {"torch", t.torch},
                   {"device", t.device},
                   {"fix", v.variant.name()},
                   {"fixes", v.variant.fixes},
                   {"baseline_ms", r3(t.baseline.median_ms)},
                   {"step_ms", r3(v.median_ms)},
                   {"measured_saving_pct", r2(v.cmp->saving_pct)},
                   {"measured_range_pct", ordered_json::array({r2(v.cmp->low_pct), r2(v.cmp->high_pct)})},
                   {"significant", v.cmp->significant},
                   {"rounds", t.rounds + v.extra_rounds}};
    ordered_json outliers = ordered_json::array();
    for (size_t r : v.cmp->outliers) outliers.push_back(r + 1);
    j["outlier_rounds"] = outliers;
    if (v.variant.predicted) {
      j["predicted_saving_pct"] = r2(v.variant.predicted->saving_pct);
      j["predicted_range_pct"] = ordered_json::array({r2(v.variant.predicted->low_pct), r2(v.variant.predicted->high_pct)});
    } else {
      j["predicted_saving_pct"] = nullptr;
      j["predicted_range_pct"] = nullptr;
    }
    j["within_range"] = v.within_range ? ordered_json(*v.within_range) : ordered_json(nullptr);
    lines.push_back(j.dump(-1, ' ', false, ordered_json::error_handler_t::replace));
  }
  return lines;
}

}  // namespace gpuscope::cli::try_report
