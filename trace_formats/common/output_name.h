// Output-name templates shared by `gpuscope record` and the collector:
// %p pid, %h host name, %q{VAR} environment variable, %% a percent sign.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuscope {

// Unknown or unterminated escapes are kept as written; an unset %q{VAR} expands to nothing.
std::string expand_output_name(std::string_view pattern, long pid);

// The first VAR of a %q{VAR} in `pattern` that is unset or empty here, or
// nothing when every one has a value: a command that expands a name the user
// typed refuses it rather than write `run_.db` for `run_%q{RANK}.db`.
std::optional<std::string> unset_output_name_variable(std::string_view pattern);

}  // namespace gpuscope
