// Recordings from the GPU machine in tests/data: plain `.db` files, and
// `.db.zst` ones (zstd-compressed, for the larger real-model recordings)
// unpacked once per test run into a temporary file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gpuscope::testing {

// Every recording in tests/data (X.db and X.db.zst), by name.
std::vector<std::filesystem::path> recorded_data();
// The recording's stem without .db / .db.zst ("models_resnet50").
std::string recording_stem(const std::filesystem::path& p);
// A path the store can open: p itself, or p unpacked into a temporary file.
std::string readable_recording(const std::filesystem::path& p);

}  // namespace gpuscope::testing
