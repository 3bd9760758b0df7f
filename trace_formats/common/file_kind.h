// What a file that no reader or importer takes is, told from its first bytes
// and its name, for the one-line error: "compressed with zstd", "a JSON file
// with a byte-order mark", "named .gz but not gzip-compressed", "not valid
// JSON" instead of "not an SQLite database" for everything.
#pragma once

#include <optional>
#include <string>

namespace gpuscope {

// The problem with `path` where its bytes or name say what it is, else
// nullopt. `json_guess`: also call a .json name or a text starting with { or [
// no trace (an importer, which tells JSON errors better, passes false).
std::optional<std::string> file_kind_problem(const std::string& path, bool json_guess = true);

}  // namespace gpuscope
