// `gpuscope cluster node*.db`: a distributed job's recordings analysed as Dask
// tasks (cluster/cluster.h): the per-rank pass on the workers, the cross-rank
// report from their summaries. `--summarize` is the per-rank pass itself (what
// each task runs), `--from-summaries` the reduce alone.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/analysis.h"
#include "analyzer/report/report.h"
#include "cli/commands.h"
#include "cluster/cluster.h"
#include "trace_formats/common/atomic_file.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/text.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::cli {
namespace {

struct ClusterArgs {
  std::vector<std::string> inputs;
  std::string scheduler, steps, format = "text", output;
  int workers = 0;
  bool force = false, quiet = false, summarize = false, from_summaries = false, skip_bad = false;
};

// With --skip-bad, the recordings this machine sees that a reader refuses
// (damaged, not a recording) are left out, each said in one line; without
// it the first such file ends the command.
std::vector<std::string> usable_inputs(const ClusterArgs& a) {
  if (!a.skip_bad || a.from_summaries) return a.inputs;
  std::vector<std::string> kept;
  for (const std::string& path : a.inputs) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      kept.push_back(path);  // on the workers' file system only
      continue;
    }
    try {
      store::Reader check(path);
      kept.push_back(path);
    } catch (const Error& e) {
      std::fprintf(stderr, "gpuscope: cluster: skipped %s\n", terminal_safe(e.what()).c_str());
    }
  }
  if (kept.empty()) throw Error("cluster: every recording was skipped (--skip-bad); nothing to analyse");
  return kept;
}

void write_output(const ClusterArgs& a, const std::string& text) {
  if (a.output.empty() || a.output == "-") std::fwrite(text.data(), 1, text.size(), stdout);
  else write_file_atomically(a.output, text, a.force);
}

std::string read_all(const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot read");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void run_cluster(const ClusterArgs& a) {
  if (a.summarize && a.from_summaries) throw Error("cluster: --summarize and --from-summaries exclude each other");
  check_outputs({a.output}, a.inputs, a.force);
  const std::vector<std::string> inputs = usable_inputs(a);
  analyzer::Options opt;
  if (!a.steps.empty()) analyzer::parse_step_range(a.steps, opt);

  if (a.summarize) {
    std::string text;
    for (const std::string& path : inputs) text += cluster::to_json_line(cluster::summarize_file(path, opt)) + "\n";
    write_output(a, text);
    return;
  }
  std::vector<cluster::FileSummary> summaries;
  if (a.from_summaries) {
    for (const std::string& path : a.inputs) {
      auto s = cluster::parse_summaries(read_all(path), path);
      summaries.insert(summaries.end(), std::make_move_iterator(s.begin()), std::make_move_iterator(s.end()));
    }
  } else {
    cluster::check_recordings(inputs);
    cluster::Options co;
    co.scheduler = a.scheduler;
    co.workers = a.workers;
    co.steps = a.steps;
    co.progress = !a.quiet && isatty(STDERR_FILENO);
    summaries = cluster::summarize_on_dask(inputs, co);
  }
  const analyzer::Analysis r = cluster::reduce(summaries);
  write_output(a, a.format == "json"                                 ? analyzer::to_cross_rank_json(r)
                  : a.format == "markdown" || a.format == "md" ? analyzer::to_cross_rank_markdown(r)
                                                               : analyzer::to_cross_rank_text(r));
}

void add_cluster_command(CLI::App& app) {
  static ClusterArgs args;
  auto* cmd = app.add_subcommand(
      "cluster", "Analyse a distributed job's recordings as Dask tasks: every rank, stragglers, collective waits");
  cmd->add_option("recordings", args.inputs,
                  "Recordings of one job (one or more ranks each), in the order gpuscope merge would take them; with "
                  "--from-summaries, summary files (- for stdin)")
      ->required();
  cmd->add_option("--scheduler", args.scheduler,
                  "A Dask scheduler's address (tcp://host:8786); default: a local cluster. Its workers must see the "
                  "recordings and gpuscope under the same paths");
  cmd->add_option("--workers", args.workers, "Workers of the local cluster (default: one per core, at most one per file)")
      ->check(whole_number(1, 4096));
  cmd->add_option("--steps", args.steps, "Analyse steps A-B on every rank (also A-, -B, A); default: all but warm-up");
  cmd->add_option("--format", args.format, "Report format: text (default), markdown, json")
      ->check(CLI::IsMember({"text", "markdown", "md", "json"}));
  cmd->add_option("-o,--output", args.output, "Write the report (or the summaries) to this file instead of stdout");
  cmd->add_flag("-f,--force", args.force, "Overwrite an existing output file");
  cmd->add_flag("-q,--quiet", args.quiet, "No progress line");
  cmd->add_flag("--skip-bad", args.skip_bad,
                "Leave out recordings that cannot be read (damaged, not a recording), each said on stderr, instead of "
                "failing; checks the files this machine sees");
  cmd->add_flag("--summarize", args.summarize,
                "The per-rank pass alone, what each Dask task runs: every rank of each recording summarized, one JSON "
                "line per recording");
  cmd->add_flag("--from-summaries", args.from_summaries,
                "The reduce alone: the cross-rank report from --summarize output (files of JSON lines)");
  cmd->footer(
      "Example: gpuscope cluster run_node*.db -o report.txt\n"
      "Needs python3-distributed (Dask) for /usr/bin/python3 (GPUSCOPE_PYTHON); the driver gpuscope_cluster.py lies "
      "next to gpuscope.\nThe report is the ranks section and the cross-rank findings of gpuscope analyze on the "
      "merged recording.");
  cmd->callback([] { run_cluster(args); });
}

CommandRegistrar registrar(66, add_cluster_command);

}  // namespace
}  // namespace gpuscope::cli
