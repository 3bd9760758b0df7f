// The control thread's lines (trace_formats/common/control_channel.h): one
// request line in, answer lines out, and a capture request's fields.
#pragma once

#include <string>

#include "collector/ondemand.h"
#include "trace_formats/common/control_channel.h"

namespace gpuscope::collector::ondemand {

// Sends the whole line (false when the peer is gone).
bool send_line(int fd, const std::string& line);
// Answers `error why=...` and closes the connection.
void reply_error(int fd, const std::string& why);
// One request line, read within two seconds (false: none, or over 8 KiB).
bool read_line(int fd, std::string& line);
// A field as an integer (`fallback` when absent or not a number) or a real (0 when absent).
long long number(const control::Message& m, const char* key, long long fallback);
double real(const control::Message& m, const char* key);
// A `capture` or `watch` request's capture.
Request request_from(const control::Message& m);

}  // namespace gpuscope::collector::ondemand
