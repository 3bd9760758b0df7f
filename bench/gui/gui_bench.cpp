// gui_bench: how fast the viewer opens and draws a big recording.
//   gui_bench [--events 10000000] [--db /tmp/gpuscope_bench_10M.db] [--regenerate]
//             [--frames 25] [--size 1920x1080]
// Opens the recording in the real window (offscreen) as a user would, and
// reports: time to the first frame (window painted with the recording's
// layout), to the first and last batch of tracks, the full load, resident
// memory, and the time to draw one frame of the timeline (QImage, median and
// worst of N) at fit-all and at three zoom levels, plus fit-all with a search
// highlight on.
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QImage>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench/gui/gen_recording.h"
#include "gui/model/search.h"
#include "gui/view/main_window.h"
#include "gui/view/timeline_view.h"

using namespace gpuscope;
using namespace gpuscope::gui;

namespace {

double rss_mib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  return 0;
}

struct FrameStats {
  double median = 0, worst = 0, lanes = 0, painter = 0;  // lanes/painter: medians
  double cpu = 0;  // CPU ms per frame, all threads (what an idle machine would need)
};

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

FrameStats time_frames(TimelineView* v, int frames) {
  QImage img(v->size(), QImage::Format_ARGB32_Premultiplied);
  v->render(img);  // warm caches
  v->render(img);
  std::vector<double> ms, lanes, painter;
  const double cpu0 = cpu_ms();
  for (int i = 0; i < frames; ++i) {
    v->invalidateLaneCache();  // a full redraw, as after a zoom
    QElapsedTimer t;
    t.start();
    v->render(img);
    ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    lanes.push_back(v->lastFrameTiming().lanes_ms);
    painter.push_back(v->lastFrameTiming().painter_ms);
  }
  const double cpu = (cpu_ms() - cpu0) / frames;
  std::sort(ms.begin(), ms.end());
  std::sort(lanes.begin(), lanes.end());
  std::sort(painter.begin(), painter.end());
  return {ms[ms.size() / 2], ms.back(), lanes[lanes.size() / 2], painter[painter.size() / 2], cpu};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t events = 10'000'000;
  std::string db = "/tmp/gpuscope_bench_10M.db";
  bool regenerate = false, frames_only = false;
  int frames = 25, width = 1920, height = 1080;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gui_bench: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--events")) events = std::atoll(next());
    else if (!std::strcmp(argv[i], "--db")) db = next();
    else if (!std::strcmp(argv[i], "--regenerate")) regenerate = true;
    else if (!std::strcmp(argv[i], "--frames-only")) frames_only = true;  // load on this thread, no findings
    else if (!std::strcmp(argv[i], "--frames")) frames = std::max(1, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--size")) {
      if (std::sscanf(next(), "%dx%d", &width, &height) != 2) {
        std::fprintf(stderr, "gui_bench: --size WxH\n");
        return 2;
      }
    } else {
      std::fprintf(stderr, "usage: gui_bench [--events N] [--db PATH] [--regenerate] [--frames N] [--size WxH] [--frames-only]\n");
      return 2;
    }
  }
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  QApplication app(argc, argv);

  if (regenerate || !QFileInfo::exists(QString::fromStdString(db))) {
    QElapsedTimer t;
    t.start();
    bench::GeneratedCounts n = bench::generate_recording(db, events, true);
    std::printf("generated %s: %lld events (%lld kernels, %lld memcpys, %lld API calls, %lld ops, %lld ranges) over %.1f s in %.1f s\n",
                db.c_str(), static_cast<long long>(n.events()), static_cast<long long>(n.kernels),
                static_cast<long long>(n.memcpys), static_cast<long long>(n.api_calls), static_cast<long long>(n.ops),
                static_cast<long long>(n.ranges), static_cast<double>(n.span_ns) / 1e9, static_cast<double>(t.elapsed()) / 1e3);
  }
  std::printf("file %s, %.0f MiB\n", db.c_str(), static_cast<double>(QFileInfo(QString::fromStdString(db)).size()) / (1 << 20));

  MainWindow w;
  w.resize(width, height);
  w.show();
  QApplication::processEvents();
  TimelineView* v = w.timelineView();
  QImage img(v->size(), QImage::Format_ARGB32_Premultiplied);
  const double rss_before = rss_mib();

  QElapsedTimer clock;
  double first_frame = -1, first_batch = -1, last_batch = -1, done = -1;
  double cpu_start = 0, cpu_tracks = 0, cpu_done = 0;
  QString error;
  QEventLoop loop;
  QObject::connect(&w, &MainWindow::recordingOpened, [&] {
    v->render(img);
    if (first_frame < 0) first_frame = static_cast<double>(clock.nsecsElapsed()) / 1e6;
  });
  QObject::connect(&w, &MainWindow::batchAdded, [&] {
    v->render(img);
    last_batch = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    cpu_tracks = cpu_ms();
    if (first_batch < 0) first_batch = last_batch;
  });
  QObject::connect(&w, &MainWindow::loadFinished, [&] {
    done = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    cpu_done = cpu_ms();
    loop.quit();
  });
  QObject::connect(&w, &MainWindow::loadFailed, [&](const QString& reason) {
    error = reason;
    loop.quit();
  });
  cpu_start = cpu_ms();
  clock.start();
  if (frames_only) {
    if (!w.openBlocking(QString::fromStdString(db), &error, false)) loop.quit();
  } else {
    w.openFile(QString::fromStdString(db));
    loop.exec();
  }
  if (!error.isEmpty()) {
    std::fprintf(stderr, "gui_bench: %s\n", qPrintable(error));
    return 2;
  }
  const Timeline* tl = w.timeline();
  std::printf("events %lld, timeline %d x %d px, %d frames per measurement\n",
              static_cast<long long>(tl->event_count()), v->width(), v->height(), frames);
  if (!frames_only) {
    std::printf("open (wall): first frame %.0f ms, first tracks %.0f ms, all tracks %.0f ms, findings %.0f ms\n",
                first_frame, first_batch, last_batch, done);
    std::printf("open (CPU, all threads): all tracks %.0f ms, findings %.0f ms more\n", cpu_tracks - cpu_start,
                cpu_done - cpu_tracks);
  }
  std::printf("memory: %.0f MiB resident after load (%.0f MiB before)\n", rss_mib(), rss_before);

  const double lo = static_cast<double>(tl->t_min()), hi = static_cast<double>(tl->t_max());
  const double mid = (lo + hi) / 2, span = hi - lo;
  struct Level {
    const char* name;
    double span;
  };
  const Level levels[] = {{"fit all", 0}, {"1/30 of the run", span / 30}, {"1/3000", span / 3000}, {"1/300000", span / 300000}};
  std::printf("\n%-18s %12s %12s %10s %10s %10s %10s\n", "zoom", "view span", "median ms", "worst ms", "lanes ms", "painter ms", "CPU ms");
  std::printf("%-18s %12s %12s %10s %10s %10s %10s\n", "", "", "(wall)", "(wall)", "(wall)", "(wall)", "(mean)");
  for (const Level& l : levels) {
    if (l.span == 0)
      v->fitAll();
    else
      v->setRange(mid - l.span / 2, mid + l.span / 2);
    FrameStats s = time_frames(v, frames);
    std::printf("%-18s %10.3f ms %12.2f %10.2f %10.2f %10.2f %10.2f\n", l.name, (v->viewEnd() - v->viewStart()) / 1e6,
                s.median, s.worst, s.lanes, s.painter, s.cpu);
  }
  // A frame that changes only overlays (a click selects an event): lanes reused.
  {
    v->fitAll();
    QImage frame(v->size(), QImage::Format_ARGB32_Premultiplied);
    v->render(frame);
    std::vector<double> ms;
    for (int i = 0; i < frames; ++i) {
      v->select(i % 2 ? EventRef{} : tl->kernel_summary().front().longest);
      QElapsedTimer t;
      t.start();
      v->render(frame);
      ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%-18s %10.3f ms %12.2f %10.2f   (selection changes; lanes cached)\n", "fit all, select",
                (v->viewEnd() - v->viewStart()) / 1e6, ms[ms.size() / 2], ms.back());
    v->select({});
  }
  // Fit-all with every kernel of one name highlighted (a search).
  Highlight h;
  const auto mask = match_names(*tl->strings(), QStringLiteral("kernel_1<"), false);
  QElapsedTimer st;
  st.start();
  h.select(*tl, [&](const Event& e) { return mask[e.name]; });
  const double search_ms = static_cast<double>(st.nsecsElapsed()) / 1e6;
  v->setHighlight(&h);
  v->fitAll();
  FrameStats s = time_frames(v, frames);
  std::printf("%-18s %10.3f ms %12.2f %10.2f %10.2f %10.2f %10.2f   (search: %zu matches in %.0f ms)\n",
              "fit all, highlight", (v->viewEnd() - v->viewStart()) / 1e6, s.median, s.worst, s.lanes, s.painter, s.cpu,
              h.count(), search_ms);
  v->setHighlight(nullptr);
  return 0;
}
