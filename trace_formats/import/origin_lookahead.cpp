#include "trace_formats/import/origin_lookahead.h"

#include <memory>
#include <string>

namespace gpuscope::formats {

namespace {

// A TraceEvent whose views point into its own bytes instead of the parse
// window, which the next event overwrites.
struct OwnedEvent {
  TraceEvent ev;
  std::string bytes;  // never moved once filled: the views point into it
};

template <class F> void each_view(TraceEvent& e, F&& f) {
  // A field added to TraceEvent must be listed here when it is a view; the
  // size check makes an addition stop here first.
  static_assert(sizeof(TraceEvent) == 592, "TraceEvent changed: update each_view");
  for (std::string_view* v : {&e.ph, &e.cat, &e.name, &e.pid.text, &e.tid.text, &e.input_dims, &e.input_type,
                              &e.arg_name, &e.arg_labels, &e.source, &e.domain, &e.step_source, &e.range_kind})
    f(*v);
  for (auto& c : e.counters) f(c.first);
}

std::shared_ptr<OwnedEvent> own(const TraceEvent& ev) {
  auto o = std::make_shared<OwnedEvent>();
  o->ev = ev;
  size_t total = 0;
  each_view(o->ev, [&](std::string_view& v) { total += v.size(); });
  o->bytes.reserve(total);
  each_view(o->ev, [&](std::string_view& v) {
    size_t at = o->bytes.size();
    o->bytes.append(v);
    v = std::string_view(o->bytes.data() + at, v.size());
  });
  return o;
}

}  // namespace

void OriginLookahead::on_event(const TraceEvent& ev) {
  if (released_) {
    target_.on_event(ev);
    return;
  }
  probe_.on_event(ev);
  held_.push_back([o = own(ev)](TraceSink& s) { s.on_event(o->ev); });
  if (++held_events_ == limit_) release();
}

void OriginLookahead::on_device(const DeviceProps& dev) {
  if (released_) {
    target_.on_device(dev);
    return;
  }
  probe_.on_device(dev);
  held_.push_back([dev](TraceSink& s) { s.on_device(dev); });
}

void OriginLookahead::on_distributed(const DistributedInfo& info) {
  if (released_) {
    target_.on_distributed(info);
    return;
  }
  probe_.on_distributed(info);
  held_.push_back([info](TraceSink& s) { s.on_distributed(info); });
}

void OriginLookahead::on_base_time(int64_t ns) {
  if (released_) {
    target_.on_base_time(ns);
    return;
  }
  probe_.on_base_time(ns);
  held_.push_back([ns](TraceSink& s) { s.on_base_time(ns); });
}

void OriginLookahead::on_top_level(std::string_view key, std::string_view value) {
  if (released_) {
    target_.on_top_level(key, value);
    return;
  }
  probe_.on_top_level(key, value);
  held_.push_back([k = std::string(key), v = std::string(value)](TraceSink& s) { s.on_top_level(k, v); });
}

void OriginLookahead::release() {
  if (released_) return;
  released_ = true;
  if (auto origin = probe_.settled_origin()) target_.preset_origin(*origin);
  for (auto& call : held_) call(target_);
  held_.clear();
  held_.shrink_to_fit();
}

}  // namespace gpuscope::formats
