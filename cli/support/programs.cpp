#include "cli/support/programs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace gpuscope::cli {

std::string find_executable(const std::string& name) {
  auto runnable = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return runnable(name) ? name : std::string();
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (runnable(candidate)) return candidate;
  }
  return {};
}

std::string executable_problem(const std::string& name) {
  auto problem = [](const std::string& p) -> std::string {
    struct stat st {};
    if (stat(p.c_str(), &st) != 0) return "";
    if (S_ISDIR(st.st_mode)) return "is a directory";
    return "not executable";
  };
  if (name.find('/') != std::string::npos) {
    std::string why = problem(name);
    return why.empty() ? "command not found" : why;
  }
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string why = problem((dir.empty() ? "." : dir) + "/" + name);
    if (why == "not executable") return why;
  }
  return "command not found";
}

}  // namespace gpuscope::cli
