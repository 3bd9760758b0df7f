// store/live: a file whose flock another open file description holds (as
// gpuscope record holds its output) is live, named with the holder's pid; a
// file nobody holds, or a missing one, is not.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>

#include "trace_formats/store/live.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope::store {
namespace {

TEST(Live, AFlockHolderIsTheRecorder) {
  const std::string path = testing::fresh_temp_db("live_flock");
  std::ofstream(path) << "x";
  EXPECT_EQ(live_writer(path), std::nullopt);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  EXPECT_EQ(live_writer(path), "gpuscope record, pid " + std::to_string(::getpid()));
  ::close(fd);
  EXPECT_EQ(live_writer(path), std::nullopt);
  EXPECT_EQ(live_writer(path + ".missing"), std::nullopt);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace gpuscope::store
