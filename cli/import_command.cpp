// `gpuscope import TRACE.json[.gz] -o RUN.db`: torch.profiler traces into the
// gpuscope schema, so info, analyze, view and export work on them.
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "trace_formats/common/text.h"
#include "trace_formats/import/importer.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::cli {
namespace {

struct ImportArgs {
  std::string trace, output;
  bool force = false, quiet = false;
};

void run_import(const ImportArgs& a) {
  formats::ImportOptions opt;
  opt.force = a.force;
  opt.progress = !a.quiet;
  opt.meta.emplace_back(meta_key::kGpuscopeVersion, GPUSCOPE_VERSION);
  formats::ImportResult r = formats::import_trace(a.trace, a.output, opt);
  if (!a.quiet) std::fprintf(stderr, "gpuscope: imported %s -> %s\n", terminal_safe(a.trace).c_str(),
                             terminal_safe(a.output).c_str());
  std::fprintf(stderr, "gpuscope: %s\n", formats::import_summary(r).c_str());
  const std::string dropped = formats::import_dropped_line(r);
  if (!dropped.empty()) std::fprintf(stderr, "gpuscope: %s\n", dropped.c_str());
}

}  // namespace

static void add_import_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "import", "Import a torch.profiler (Kineto) Chrome trace, .json or .json.gz, into a gpuscope database");
  static ImportArgs args;
  cmd->add_option("trace", args.trace, "torch.profiler trace: .json or .json.gz (gzip is detected from the data)")
      ->required();
  cmd->add_option("-o,--output", args.output, "Database to write")->required()->check(file_name());
  cmd->add_flag("-f,--force", args.force, "Overwrite an existing output");
  cmd->add_flag("-q,--quiet", args.quiet, "No progress line; only the summary");
  cmd->callback([] { run_import(args); });
}

namespace {
CommandRegistrar registrar(60, add_import_command);
}  // namespace

}  // namespace gpuscope::cli
