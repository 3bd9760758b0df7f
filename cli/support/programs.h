// Finding the programs gpuscope runs (the job, python, cmake, a compiler) the
// way execvp would; shared by record, doctor and setup (library gs_cli_support).
#pragma once

#include <string>

namespace gpuscope::cli {

// PATH lookup as execvp does it; empty when not found.
std::string find_executable(const std::string& name);
// Why find_executable found nothing: "command not found", "not executable", "is a directory".
std::string executable_problem(const std::string& name);

}  // namespace gpuscope::cli
