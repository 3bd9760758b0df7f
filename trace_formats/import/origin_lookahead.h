// Holds back the first events of a trace to find its time origin before any
// row is written. Times are stored relative to the earliest event, but Kineto
// traces are not sorted: a ProfilerStep range, for one, follows the ops it
// encloses. Without look-ahead the mapper starts from the first event's time
// and finish() shifts every stored row by an UPDATE of each table, 19 % of
// the import's instructions on the generated benchmark trace. Here a second
// mapper, writing nothing, sees the held events first; the real mapper then
// starts from the origin it settled on and gets the same events in the same
// order, so the rows are those it would have written anyway. An event earlier
// than all held ones still arrives later only costs that UPDATE, as before.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "trace_formats/import/kineto_mapper.h"

namespace gpuscope::formats {

class OriginLookahead : public TraceSink {
 public:
  // About 8 000 events (ImportOptions::lookahead_events) cover several
  // training steps of a Kineto trace and hold a few MB. 0: no look-ahead.
  OriginLookahead(KinetoMapper& target, size_t events)
      : target_(target), limit_(events), released_(events == 0), probe_(discard_) {}

  void on_event(const TraceEvent& ev) override;
  void on_device(const DeviceProps& dev) override;
  void on_distributed(const DistributedInfo& info) override;
  void on_base_time(int64_t ns) override;
  void on_top_level(std::string_view key, std::string_view value) override;

  // Hands what is held to the target; later calls pass straight through.
  // Call once the input is read (a short trace never fills the window).
  void release();

 private:
  KinetoMapper& target_;
  size_t limit_;
  size_t held_events_ = 0;
  bool released_;
  RowWriter discard_;
  KinetoMapper probe_;
  // Every call since the start, in order, each owning copies of its data.
  std::vector<std::function<void(TraceSink&)>> held_;
};

}  // namespace gpuscope::formats
