#include "gui/view/lane_painter.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "gui/view/colors.h"

namespace gpuscope::gui {
namespace {

constexpr double kWidePx = 3.0;     // events this wide get their own box
constexpr double kDimAlpha = 0.28;  // base events under a highlight
// Busy time per column within 1/16 of a column (invisible as shading), for a
// walk that stops above the events (LanePyramid::columns).
constexpr double kSplitPx = 1.0 / 16;
// Below this many events in view, threads cost more than they save.
constexpr size_t kEventsPerThread = 300'000;

double busy_alpha(double busy, double ns_per_px) {
  if (busy <= 0) return 0.45;  // an instant: visible, no duration, not a solid bar
  return std::min(1.0, 0.35 + 0.65 * busy / ns_per_px);
}

}  // namespace

void LanePainter::paint_one(uchar* bits, qsizetype stride, int height, const LaneFrame& f,
                            const LaneJob& job, Scratch& s) {
  const auto& lane = job.track->lanes[job.lane];
  const auto& ev = lane.events;
  // A shifted track is walked in its own times: the window moves the other way.
  const double t0 = f.t0 - static_cast<double>(job.shift);
  const Window w{t0, f.ns_per_px, f.width};
  const bool dim = f.highlight && !f.highlight->empty();
  const QRgb bg = job.bg;
  auto x_of = [&](int64_t t) { return f.x0 + (static_cast<double>(t) - t0) / f.ns_per_px; };
  s.acc.reset(f.width);
  s.wide.clear();
  lane.lod.columns(ev, w, s.acc, &s.wide, kWidePx, kSplitPx);
  s.line.assign(static_cast<size_t>(f.width), bg);
  for (int c = 0; c < f.width; ++c) {
    const uint32_t d = s.acc.dominant[static_cast<size_t>(c)];
    if (d == kNoEvent) continue;
    const double a = busy_alpha(s.acc.busy[static_cast<size_t>(c)], f.ns_per_px);
    s.line[static_cast<size_t>(c)] = blend(event_color(ev[d]), bg, dim ? a * kDimAlpha : a);
  }
  const int top = job.y + 1, h = f.lane_height - 2;
  for (uint32_t k : s.wide) {
    const Event& e = ev[k];
    QRgb color = event_color(e);
    if (dim) color = blend(color, bg, kDimAlpha);
    s.boxes.push_back({x_of(e.start), x_of(e.end), top, h, color, e.name, false});
  }
  if (const Highlight::FilteredLane* fl = dim ? f.highlight->find(job.track, job.lane) : nullptr) {
    const auto& hev = fl->events.events;
    s.acc.reset(f.width);
    s.wide.clear();
    fl->events.lod.columns(hev, w, s.acc, &s.wide, kWidePx, kSplitPx);
    for (int c = 0; c < f.width; ++c) {
      const uint32_t d = s.acc.dominant[static_cast<size_t>(c)];
      if (d == kNoEvent) continue;
      const double a = std::max(0.7, busy_alpha(s.acc.busy[static_cast<size_t>(c)], f.ns_per_px));
      s.line[static_cast<size_t>(c)] = blend(event_color(hev[d]), bg, a);
    }
    for (uint32_t k : s.wide) {
      const Event& e = hev[k];
      s.boxes.push_back({x_of(e.start), x_of(e.end), top, h, event_color(e), e.name, true});
    }
  }
  for (int y = std::max(top, f.clip_top); y < std::min(top + h, height); ++y)
    std::memcpy(reinterpret_cast<QRgb*>(bits + y * stride) + f.x0, s.line.data(),
                sizeof(QRgb) * static_cast<size_t>(f.width));
}

void LanePainter::paint(QImage& img, const LaneFrame& frame, const std::vector<LaneJob>& jobs,
                        std::vector<LaneBox>& boxes) {
  LaneFrame f = frame;
  f.width = std::min(f.width, img.width() - f.x0);
  if (f.width <= 0 || jobs.empty()) return;
  // Work is about the events in view; lanes go to threads when there is enough.
  size_t in_view = 0;
  for (const LaneJob& j : jobs) {
    const auto& ev = j.track->lanes[j.lane].events;
    const double t0 = f.t0 - static_cast<double>(j.shift);
    in_view += LanePyramid::first_ending_after(ev, static_cast<int64_t>(t0 + f.ns_per_px * f.width)) -
               LanePyramid::first_ending_after(ev, static_cast<int64_t>(t0));
  }
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::clamp<size_t>(in_view / kEventsPerThread, 1, std::min<size_t>({hw, jobs.size(), 8}));
  if (scratch_.size() < threads) scratch_.resize(threads);
  uchar* bits = img.bits();  // detaches once, before any thread writes
  const qsizetype stride = img.bytesPerLine();
  const int height = img.height();
  std::atomic<size_t> next{0};
  auto worker = [&](size_t wi) {
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) paint_one(bits, stride, height, f, jobs[i], scratch_[wi]);
  };
  for (size_t i = 0; i < threads; ++i) scratch_[i].boxes.clear();
  std::vector<std::thread> pool;
  for (size_t i = 1; i < threads; ++i) pool.emplace_back(worker, i);
  worker(0);
  for (auto& t : pool) t.join();
  for (size_t i = 0; i < threads; ++i) boxes.insert(boxes.end(), scratch_[i].boxes.begin(), scratch_[i].boxes.end());
}

}  // namespace gpuscope::gui
