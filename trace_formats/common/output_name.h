// Output-name templates shared by `gpuscope record` and the collector:
// %p pid, %h host name, %q{VAR} environment variable, %% a percent sign.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope {

// Unknown or unterminated escapes are kept as written.
std::string expand_output_name(std::string_view pattern, long pid);

}  // namespace gpuscope
