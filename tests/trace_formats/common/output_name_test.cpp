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

// `record -o 'r_%q{NOPE}.db'` must not quietly become r_.db (issue 50): the
// first variable that is unset or empty is named, so the command can refuse it.
TEST(OutputName, NamesAVariableThatIsUnsetOrEmpty) {
  setenv("GS_TEST_VAR", "rank3", 1);
  setenv("GS_EMPTY_VAR_X", "", 1);
  unsetenv("GS_UNSET_VAR_X");
  EXPECT_EQ(unset_output_name_variable("r_%q{GS_UNSET_VAR_X}.db"), "GS_UNSET_VAR_X");
  EXPECT_EQ(unset_output_name_variable("%q{GS_TEST_VAR}_%q{GS_EMPTY_VAR_X}.db"), "GS_EMPTY_VAR_X");
  EXPECT_EQ(unset_output_name_variable("r_%q{}.db"), "");
  EXPECT_EQ(unset_output_name_variable("%h-%q{GS_TEST_VAR}_%p.db"), std::nullopt);
  EXPECT_EQ(unset_output_name_variable("100%%q{GS_UNSET_VAR_X}.db"), std::nullopt);  // %% then a plain q{...}
  EXPECT_EQ(unset_output_name_variable("odd_%q{open"), std::nullopt);                 // kept as written
}

}  // namespace
}  // namespace gpuscope
