// The control channel of a job started with `gpuscope record --on-demand`
// (docs/on-demand.md): the collector listens on an abstract unix socket named
// after its pid and admits only its own user (SO_PEERCRED); `gpuscope
// trigger` and `gpuscope ps` talk to it. One request line per connection,
// answers as lines, each a verb and space-separated key=value fields, values
// %-escaped. Header-only: the collector and the CLI share it.
#pragma once

#include <cctype>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>

namespace gpuscope::control {

// The socket's abstract name (without the leading NUL); /proc/net/unix shows
// it as "@" + this, which is how `gpuscope ps` finds the jobs.
inline constexpr std::string_view kSocketPrefix = "gpuscope/ctl/";
inline std::string socket_name(long pid) { return std::string(kSocketPrefix) + std::to_string(pid); }

// Requests: `status`; `capture file=F [steps=N] [seconds=S] [control=C]
// [start_step=K] [create=1]` (answered `started ...`, then `done ...` or
// `error ...` when it ends); `watch file=TEMPLATE [slow=X] [every=S]
// [cooldown=S] [steps=N] [control=C]` (answered `ok`, then one `done ...` per
// capture while the connection stays open; closing it disarms the rule);
// `cancel`. Any request may be answered `error why=...`.
struct Message {
  std::string verb;
  std::map<std::string, std::string> fields;
  std::string get(const std::string& key, const std::string& fallback = {}) const {
    auto it = fields.find(key);
    return it == fields.end() ? fallback : it->second;
  }
};

inline std::string escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || c == '%' || c == '=' || u == 0x7f) {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

inline std::string unescape(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '%' && i + 2 < v.size()) {
      out += static_cast<char>(std::stoi(std::string(v.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += v[i];
    }
  }
  return out;
}

// One line, ending in '\n'.
inline std::string format(const Message& m) {
  std::string line = m.verb;
  for (const auto& [k, v] : m.fields) line += " " + k + "=" + escape(v);
  return line + "\n";
}

// A line without its '\n'; malformed fields are skipped.
inline Message parse(std::string_view line) {
  Message m;
  size_t i = 0;
  auto next = [&]() {
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    return line.substr(start, i - start);
  };
  m.verb = std::string(next());
  for (std::string_view f = next(); !f.empty(); f = next()) {
    const size_t eq = f.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    bool ok = true;
    for (size_t j = eq + 1; j < f.size(); ++j)
      if (f[j] == '%' && (j + 2 >= f.size() || !std::isxdigit(static_cast<unsigned char>(f[j + 1])) ||
                          !std::isxdigit(static_cast<unsigned char>(f[j + 2]))))
        ok = false;
    if (ok) m.fields[std::string(f.substr(0, eq))] = unescape(f.substr(eq + 1));
  }
  return m;
}

}  // namespace gpuscope::control
