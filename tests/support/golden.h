// Golden files, compared the one way every test here does: a mismatch writes
// <expected>.actual beside the expected file and returns what to show (the
// diff, or that the file is missing); GPUSCOPE_UPDATE_GOLDEN=1 rewrites the
// expected file instead.
#pragma once

#include <filesystem>
#include <string>

namespace gpuscope::test_support {

// Empty when `actual` is what `expected` holds (or was just written to it);
// otherwise the failure message, with a unified diff of at most 80 lines.
std::string golden_mismatch(const std::filesystem::path& expected, const std::string& actual);

}  // namespace gpuscope::test_support
