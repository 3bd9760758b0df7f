#include "cluster/summary.h"

#include <nlohmann/json.hpp>

#include "trace_formats/common/error.h"

namespace gpuscope::cluster {
namespace {

using json = nlohmann::ordered_json;

json rank_json(const analyzer::RankPass::Process& p) {
  const analyzer::RankSummary& r = p.summary;
  json slowest = json::array();
  for (const auto& t : r.slowest) slowest.push_back({t.start_ns, t.end_ns, t.label});
  return json{{"rank", r.rank},
              {"pid", r.pid},
              {"host", r.host},
              {"device", r.device},
              {"steps", r.steps},
              {"step_ms_median", r.step_ms_median},
              {"step_ms_p95", r.step_ms_p95},
              {"gpu_utilization", r.gpu_utilization},
              {"collective_ms_per_step", r.collective_ms_per_step},
              {"data_ms_per_step", r.data_ms_per_step},
              {"compute_ms_per_step", r.compute_ms_per_step},
              {"other_ms_per_step", r.other_ms_per_step},
              {"own_ms_median", r.own_ms_median},
              {"collective_ms_median", r.collective_ms_median},
              {"communication_ms_per_step", r.communication_ms_per_step},
              {"comm_overlap_pct", r.comm_overlap_pct},
              {"slowest", slowest},
              {"step_ms_mean", p.step_ms_mean},
              {"untraced_step_ms", p.untraced_step_ms},
              {"error", p.error}};
}

analyzer::RankPass::Process rank_from(const json& j) {
  analyzer::RankPass::Process p;
  analyzer::RankSummary& r = p.summary;
  r.rank = j.at("rank").get<int64_t>();
  r.pid = j.at("pid").get<int64_t>();
  r.host = j.at("host").get<std::string>();
  r.device = j.at("device").get<int64_t>();
  r.steps = j.at("steps").get<int64_t>();
  r.step_ms_median = j.at("step_ms_median").get<double>();
  r.step_ms_p95 = j.at("step_ms_p95").get<double>();
  r.gpu_utilization = j.at("gpu_utilization").get<double>();
  r.collective_ms_per_step = j.at("collective_ms_per_step").get<double>();
  r.data_ms_per_step = j.at("data_ms_per_step").get<double>();
  r.compute_ms_per_step = j.at("compute_ms_per_step").get<double>();
  r.other_ms_per_step = j.at("other_ms_per_step").get<double>();
  r.own_ms_median = j.at("own_ms_median").get<double>();
  r.collective_ms_median = j.at("collective_ms_median").get<double>();
  // Summaries written before these two existed (they read as "no NCCL kernels").
  r.communication_ms_per_step = j.value("communication_ms_per_step", 0.0);
  r.comm_overlap_pct = j.value("comm_overlap_pct", -1.0);
  for (const auto& t : j.at("slowest"))
    r.slowest.push_back({t.at(0).get<int64_t>(), t.at(1).get<int64_t>(), t.at(2).get<std::string>()});
  p.step_ms_mean = j.at("step_ms_mean").get<double>();
  p.untraced_step_ms = j.at("untraced_step_ms").get<double>();
  p.error = j.at("error").get<std::string>();
  return p;
}

FileSummary summary_from(const json& j) {
  if (j.value("schema", "") != kSummarySchema)
    throw Error("not a gpuscope rank summary (schema '" + j.value("schema", "") + "', wanted " + kSummarySchema + ")");
  FileSummary s;
  s.path = j.at("path").get<std::string>();
  s.host = j.at("host").get<std::string>();
  s.job_key = j.at("job_key").get<std::string>();
  s.utc_first = j.at("utc_first_ns").get<int64_t>();
  s.utc_last = j.at("utc_last_ns").get<int64_t>();
  for (const auto& p : j.at("processes"))
    s.processes.push_back({p.at("pid").get<int64_t>(), p.at("rank").get<int64_t>(), p.at("world_size").get<int64_t>(),
                           p.at("host").get<std::string>()});
  const json& c = j.at("default_process");
  s.pass.choice.pid = c.at("pid").get<int64_t>();
  s.pass.choice.tier = c.at("tier").get<int>();
  s.pass.choice.value = c.at("value").get<int64_t>();
  s.pass.choice.row = c.at("row").get<int64_t>();
  if (c.contains("unranked")) s.pass.chosen = rank_from(c.at("unranked"));
  for (const auto& r : j.at("ranks")) s.pass.ranks.push_back(rank_from(r));
  return s;
}

}  // namespace

FileSummary summarize_file(const std::string& path, const analyzer::Options& options) {
  merge::Input in = merge::open_input(path);
  FileSummary s;
  s.path = path;
  s.host = in.host;
  s.job_key = in.job_key;
  s.utc_first = in.utc_first;
  s.utc_last = in.utc_last;
  s.processes = in.processes;
  s.pass = analyzer::rank_pass(*in.reader, options);
  return s;
}

std::string to_json_line(const FileSummary& s) {
  json processes = json::array(), ranks = json::array();
  for (const auto& p : s.processes)
    processes.push_back({{"pid", p.pid}, {"rank", p.rank}, {"world_size", p.world_size}, {"host", p.host}});
  for (const auto& r : s.pass.ranks) ranks.push_back(rank_json(r));
  const analyzer::PidChoice& c = s.pass.choice;
  json choice{{"pid", c.pid}, {"tier", c.tier}, {"value", c.value}, {"row", c.row}};
  if (s.pass.chosen.summary.rank < 0) choice["unranked"] = rank_json(s.pass.chosen);
  const json j{{"schema", kSummarySchema},    {"path", s.path},
               {"host", s.host},              {"job_key", s.job_key},
               {"utc_first_ns", s.utc_first}, {"utc_last_ns", s.utc_last},
               {"processes", processes},      {"default_process", choice},
               {"ranks", ranks}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::vector<FileSummary> parse_summaries(std::string_view text, const std::string& origin) {
  std::vector<FileSummary> out;
  size_t line = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = text.substr(start, end - start);
    ++line;
    start = end + 1;
    if (l.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    try {
      out.push_back(summary_from(json::parse(l)));
    } catch (const Error& e) {
      throw Error(origin + ": line " + std::to_string(line) + ": " + e.what());
    } catch (const std::exception& e) {
      throw Error(origin + ": line " + std::to_string(line) + ": not a gpuscope rank summary (" + e.what() + ")");
    }
  }
  return out;
}

merge::Input as_input(const FileSummary& s) {
  merge::Input in;
  in.path = s.path;
  in.host = s.host;
  in.job_key = s.job_key;
  in.processes = s.processes;
  in.utc_first = s.utc_first;
  in.utc_last = s.utc_last;
  return in;
}

}  // namespace gpuscope::cluster
