// The built gpuscope run with its stdout and stderr kept apart, for the CLI
// tests that check each stream: bad input gets one line on stderr, exit 2 and
// nothing on stdout.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace gpuscope::testing {

struct CommandResult {
  int code = -1;  // -1 when not ended by exit
  std::string out, err;
};

// `env` is prepended to the command line ("VAR=value ..."); stderr goes
// through `err_file`, which the caller names in its scratch folder.
inline CommandResult run_gpuscope(const std::string& args, const std::string& err_file, const std::string& env = "") {
  const std::string cmd = env + " " + std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope " + args + " 2>'" + err_file + "'";
  CommandResult r;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream f(err_file);
  r.err.assign(std::istreambuf_iterator<char>(f), {});
  return r;
}

inline int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

inline void expect_one_line_error(const CommandResult& r, const std::string& needle) {
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 300);
}

}  // namespace gpuscope::testing
