#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "trace_formats/common/output_name.h"

namespace gpuscope {
namespace {

TEST(OutputName, ExpandsPidHostAndEnvironment) {
  setenv("GS_TEST_VAR", "rank3", 1);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(expand_output_name("run_%p.db", 42), "run_42.db");
  EXPECT_EQ(expand_output_name("%h-%q{GS_TEST_VAR}.db", 1), std::string(host) + "-rank3.db");
  EXPECT_EQ(expand_output_name("100%%_%q{GS_UNSET_VAR_X}.db", 1), "100%_.db");
  EXPECT_EQ(expand_output_name("odd_%x_%q{open", 1), "odd_%x_%q{open");
  EXPECT_EQ(expand_output_name("trailing%", 1), "trailing%");
}

}  // namespace
}  // namespace gpuscope
