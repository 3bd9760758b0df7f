// analyzer_scenario NAME [--not] OUT.db: writes a synthetic test recording, for
// looking at a scenario with `gpuscope analyze` or `gpuscope view`.
#include <cstdio>
#include <cstring>
#include <exception>

#include "tests/analyzer/scenarios.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: analyzer_scenario NAME [--not] OUT.db\n");
    return 2;
  }
  const bool planted = !(argc > 3 && std::strcmp(argv[2], "--not") == 0);
  try {
    gpuscope::testing::write_scenario(argv[1], planted, argv[argc - 1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "analyzer_scenario: %s\n", e.what());
    return 2;
  }
  return 0;
}
