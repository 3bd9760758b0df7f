#include <iostream>

#include "cli/commands.h"
#include "trace_formats/schema/schema.h"

namespace gpuscope::cli {

static void add_schema_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("schema", "Print the database schema (SQL, or Markdown with --markdown)");
  static bool markdown = false;
  cmd->add_flag("--markdown", markdown, "Print the reference page docs/schema.md");
  cmd->callback([] { std::cout << (markdown ? schema::markdown() : schema::ddl()); });
}

namespace {
CommandRegistrar registrar(90, add_schema_command);
}  // namespace

}  // namespace gpuscope::cli
