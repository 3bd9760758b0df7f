// `gpuscope merge node0.db node1.db ... -o job.db`: the per-node recordings of
// one distributed job in one file, clocks aligned on shared collectives.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "trace_formats/common/text.h"
#include "merge/merge.h"

namespace gpuscope::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string output;
  bool force = false, quiet = false;
};

void run_merge(const MergeArgs& a) {
  merge::Options opt;
  opt.force = a.force;
  opt.progress = !a.quiet;
  opt.gpuscope_version = GPUSCOPE_VERSION;
  const merge::Result r = merge::merge_recordings(a.inputs, a.output, opt);
  for (const merge::FileReport& f : r.files) {
    std::fprintf(stderr, "gpuscope: merge: %s\n", terminal_safe(merge::describe(f)).c_str());
    if (!f.reference && f.alignment.residual_ns > merge::kLargeResidualNs)
      std::fprintf(stderr,
                   "gpuscope: warning: %s: its collectives still end %.1f ms apart after alignment; times across "
                   "nodes are that uncertain\n",
                   terminal_safe(f.path).c_str(), static_cast<double>(f.alignment.residual_ns) / 1e6);
  }
  std::fprintf(stderr, "gpuscope: wrote %s: %zu recordings, %d ranks, %lld rows\n",
               terminal_safe(a.output).c_str(), r.files.size(), r.ranks, static_cast<long long>(r.rows));
}

}  // namespace

static void add_merge_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "merge", "Merge the per-node recordings of one distributed job into one, clocks aligned on shared collectives");
  static MergeArgs args;
  cmd->add_option("recordings", args.inputs,
                  "One recording per node (record -o run_%h.db); the first one's clock is the reference")
      ->required();
  cmd->add_option("-o,--output", args.output, "Database to write")->required();
  cmd->add_flag("-f,--force", args.force, "Overwrite an existing output (never one of the inputs)");
  cmd->add_flag("-q,--quiet", args.quiet, "No progress line");
  cmd->footer(
      "Example: gpuscope merge run_node0.db run_node1.db -o job.db && gpuscope analyze job.db\n"
      "Each file's offset and residual are printed and stored in the output's meta table (merge.N.*).");
  cmd->callback([] { run_merge(args); });
}

namespace {
CommandRegistrar registrar(65, add_merge_command);
}  // namespace

}  // namespace gpuscope::cli
