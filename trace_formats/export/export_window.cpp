#include "trace_formats/export/export_window.h"

#include <algorithm>

#include "trace_formats/schema/enums.h"
#include "trace_formats/store/stretches.h"

namespace gpuscope::formats {

namespace {

// Event tables and their time columns: a span (start, end) or a point (ts).
struct Windowed {
  const char* table;
  bool point;
};
constexpr Windowed kTables[] = {{"op", false},     {"range", false},  {"api_call", false}, {"kernel", false},
                                {"memcpy", false}, {"memset", false}, {"sync", false},     {"step", false},
                                {"counter", true}, {"memory_event", true}};

}  // namespace

WindowedTables::WindowedTables(store::Reader& reader, const ExportOptions& opt) : r_(reader) {
  if (!opt.window) return;
  const std::string lo = std::to_string(opt.window->start), hi = std::to_string(opt.window->end);
  for (const Windowed& t : kTables) {
    const std::string cond = t.point ? "ts BETWEEN " + lo + " AND " + hi
                                     : "coalesce(\"end\", start) > " + lo + " AND start < " + hi;
    r_.db().exec(std::string("CREATE TEMP VIEW \"") + t.table + "\" AS SELECT * FROM main.\"" + t.table +
                 "\" WHERE " + cond);
    views_.push_back(t.table);
  }
}

WindowedTables::~WindowedTables() {
  for (const auto& v : views_) {
    try {
      r_.db().exec("DROP VIEW IF EXISTS temp.\"" + v + "\"");
    } catch (...) {
      // The connection is going away with the reader; nothing to keep consistent.
    }
  }
}

std::optional<ExportOptions::Steps> replaced_steps(store::Reader& reader, const ExportOptions& opt) {
  ExportOptions::Steps s;
  bool only_where_none = false;
  if (opt.window && !opt.window->steps.empty()) {
    s = {opt.window->pid, opt.window->steps};
  } else if (!opt.window && opt.steps_where_none && !opt.steps_where_none->steps.empty()) {
    s = *opt.steps_where_none;
    only_where_none = true;
  } else {
    return std::nullopt;
  }
  if (opt.only_pid && *opt.only_pid != s.pid) return std::nullopt;
  const std::string pid = std::to_string(s.pid);
  if (reader.db().query_int("SELECT count(*) FROM (SELECT 1 FROM range WHERE pid=" + pid + " AND source=" +
                            std::to_string(schema::range_source::profiler_step) + " LIMIT 1)").value_or(0) > 0)
    return std::nullopt;
  if (only_where_none &&
      reader.db().query_int("SELECT count(*) FROM (SELECT 1 FROM step WHERE pid=" + pid + " LIMIT 1)").value_or(0) > 0)
    return std::nullopt;
  return s;
}

std::vector<GpuscopeMark> gpuscope_marks(store::Reader& reader, const ExportOptions& opt) {
  std::vector<GpuscopeMark> out;
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  if (opt.window) {
    lo = opt.window->start;
    hi = opt.window->end;
    out.push_back({lo, lo, "gpuscope: " + opt.window->note});
  }
  const auto stretches = store::traced_stretches(reader.db()).stretches;
  for (size_t i = 1; i < stretches.size(); ++i) {
    int64_t start = std::max(stretches[i - 1].second, lo), end = std::min(stretches[i].first, hi);
    if (end > start) out.push_back({start, end, "gpuscope: untraced (the job ran on, not recorded)"});
  }
  return out;
}

}  // namespace gpuscope::formats
