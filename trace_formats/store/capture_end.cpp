#include "trace_formats/store/capture_end.h"

#include "trace_formats/schema/enums.h"
#include "trace_formats/store/rows.h"
#include "trace_formats/store/writer.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::store {

bool close_cut_capture(const std::string& path, int64_t pid) {
  Writer w(path);
  w.begin();
  auto& db = w.connection();
  const std::string of_pid = " AND pid = " + std::to_string(pid);
  const bool has_window =
      db.query_int("SELECT count(*) FROM range WHERE source = " + std::to_string(schema::range_source::sampling_window) +
                   of_pid)
          .value_or(0) > 0;
  const auto first = db.query_int(
      "SELECT min(s.start) FROM step s WHERE s.pid = " + std::to_string(pid) +
      " AND EXISTS (SELECT 1 FROM op o WHERE o.pid = s.pid AND o.start >= s.start AND o.start < s.\"end\")");
  const auto last = db.query_int("SELECT max(\"end\") FROM step WHERE 1" + of_pid);
  if (has_window || !first || !last || *last <= *first) {
    w.rollback();
    return false;
  }
  RangeRow r;
  r.pid = r.tid = pid;
  r.source = schema::range_source::sampling_window;
  r.kind = schema::range_kind::start_end;
  r.name = kSamplingWindowName;
  r.start = *first;
  r.end = *last;
  w.add(r);
  w.set_meta(meta_key::kCaptureEndedEarly, "1");
  w.commit();
  return true;
}

}  // namespace gpuscope::store
