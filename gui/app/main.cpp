// gpuscope-view: the desktop timeline viewer. `gpuscope view` runs this binary.
#include <dlfcn.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QStyleFactory>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "gui/model/format.h"
#include "gui/view/main_window.h"
#include "gui/view/screenshot.h"

namespace {

bool wants_screenshot(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--screenshot") == 0 || std::strncmp(argv[i], "--screenshot=", 13) == 0)
      return true;
  return false;
}

// Offscreen rendering makes Qt say things about the missing display that are
// not the user's problem; keep stderr to our one-line errors.
void quiet_offscreen(QtMsgType type, const QMessageLogContext& ctx, const QString& msg) {
  if (msg.contains(QLatin1String("propagateSizeHints")) || msg.contains(QLatin1String("XDG_RUNTIME_DIR")))
    return;
  if (type == QtDebugMsg || type == QtInfoMsg) return;
  (void)ctx;
  std::fprintf(stderr, "%s\n", msg.toLocal8Bit().constData());
}

bool has_arg(int argc, char** argv, std::initializer_list<const char*> names) {
  for (int i = 1; i < argc; ++i)
    for (const char* n : names)
      if (std::strcmp(argv[i], n) == 0) return true;
  return false;
}

// Without a display Qt aborts ("could not connect to display"); say what to do instead.
bool no_display() {
  auto set = [](const char* v) { return std::getenv(v) && *std::getenv(v); };
  return !set("QT_QPA_PLATFORM") && !set("DISPLAY") && !set("WAYLAND_DISPLAY");
}

// Qt aborts (SIGABRT) when DISPLAY names no X server it can reach; ask libxcb
// first, as Qt's xcb platform would, and say so in one line. Where libxcb
// cannot be loaded the xcb platform cannot run either: Qt says why.
bool x_server_unreachable() {
  const char* platform = std::getenv("QT_QPA_PLATFORM");
  if (platform && *platform && std::strncmp(platform, "xcb", 3) != 0) return false;
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((!platform || !*platform) && wayland && *wayland) return false;
  const char* display = std::getenv("DISPLAY");
  if (!display || !*display) return false;
  void* xcb = ::dlopen("libxcb.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!xcb) return false;
  using Connect = void* (*)(const char*, int*);
  using HasError = int (*)(void*);
  using Disconnect = void (*)(void*);
  auto connect = reinterpret_cast<Connect>(::dlsym(xcb, "xcb_connect"));
  auto has_error = reinterpret_cast<HasError>(::dlsym(xcb, "xcb_connection_has_error"));
  auto disconnect = reinterpret_cast<Disconnect>(::dlsym(xcb, "xcb_disconnect"));
  bool unreachable = false;
  if (connect && has_error && disconnect) {
    int screen = 0;
    void* c = connect(nullptr, &screen);
    unreachable = !c || has_error(c) != 0;
    if (c) disconnect(c);
  }
  ::dlclose(xcb);
  return unreachable;
}

struct ViewerOptions {
  QCommandLineOption screenshot{QStringLiteral("screenshot"), QStringLiteral("Render offscreen into this PNG and exit."),
                                QStringLiteral("out.png")};
  QCommandLineOption range{QStringLiteral("range"),
                           QStringLiteral("Visible time range A:B for the screenshot, e.g. 1.2:1.5 (seconds) or "
                                          "100ms:250ms, or all (the whole recording); default: the analysed steps, as the viewer opens."),
                           QStringLiteral("A:B")};
  QCommandLineOption size{QStringLiteral("size"), QStringLiteral("Screenshot size WxH (default 1400x860)."),
                          QStringLiteral("WxH")};
  QCommandLineOption force{QStringLiteral("force"), QStringLiteral("Overwrite an existing screenshot.")};
  QCommandLineOption timeline_only{QStringLiteral("timeline-only"),
                                   QStringLiteral("Screenshot only the timeline (used by tests).")};
};

void describe(QCommandLineParser& parser, const ViewerOptions& o) {
  parser.setApplicationDescription(
      QStringLiteral("Timeline viewer for gpuscope recordings (run.db) and torch.profiler traces (.json, .json.gz)."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("recording"), QStringLiteral("run.db or trace.json[.gz] to open"));
  parser.addOptions({o.screenshot, o.range, o.size, o.force, o.timeline_only});
}

void name_application() {
  QCoreApplication::setApplicationName(QStringLiteral("gpuscope-view"));
  QCoreApplication::setOrganizationName(QStringLiteral("gpuscope"));
  QCoreApplication::setApplicationVersion(QStringLiteral(GPUSCOPE_VERSION));
}

int fail(const QString& message) {
  std::fprintf(stderr, "gpuscope view: %s\n", message.toLocal8Bit().constData());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // --help and --version print and exit; they need no display.
  if (has_arg(argc, argv, {"-h", "--help", "--help-all", "-v", "--version"})) {
    QCoreApplication core(argc, argv);
    name_application();
    QCommandLineParser parser;
    const ViewerOptions options;
    describe(parser, options);
    parser.process(core);  // prints and exits
    return 0;
  }
  // A screenshot needs no display: render offscreen when there is none.
  if (wants_screenshot(argc, argv)) {
    if (no_display() || x_server_unreachable()) setenv("QT_QPA_PLATFORM", "offscreen", 1);
    qInstallMessageHandler(quiet_offscreen);
  } else if (no_display()) {
    std::fprintf(stderr,
                 "gpuscope view: no display (neither DISPLAY nor WAYLAND_DISPLAY is set): use --screenshot out.png, "
                 "QT_QPA_PLATFORM=offscreen, or X forwarding (ssh -X)\n");
    return 1;
  } else if (x_server_unreachable()) {
    std::fprintf(stderr,
                 "gpuscope view: cannot connect to the X server of DISPLAY=%s: use --screenshot out.png, "
                 "QT_QPA_PLATFORM=offscreen, or X forwarding (ssh -X)\n",
                 std::getenv("DISPLAY"));
    return 1;
  }
  QApplication app(argc, argv);
  name_application();
  // One style everywhere, so screenshots look alike across machines.
  QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));

  QCommandLineParser parser;
  const ViewerOptions options;
  describe(parser, options);
  const QCommandLineOption &screenshot = options.screenshot, &range = options.range, &size = options.size,
                           &force = options.force, &timeline_only = options.timeline_only;
  parser.process(app);

  const QStringList args = parser.positionalArguments();
  if (args.size() > 1) return fail(QStringLiteral("one recording at a time (got %1)").arg(args.size()));
  if (parser.isSet(screenshot)) {
    gpuscope::gui::ScreenshotOptions o;
    if (args.isEmpty()) return fail(QStringLiteral("--screenshot needs a recording"));
    o.input = args.first();
    o.output = parser.value(screenshot);
    o.force = parser.isSet(force);
    o.timeline_only = parser.isSet(timeline_only);
    if (parser.isSet(size)) {
      const QStringList wh = parser.value(size).split(QLatin1Char('x'));
      bool ok1 = false, ok2 = false;
      if (wh.size() == 2) o.size = QSize(wh[0].toInt(&ok1), wh[1].toInt(&ok2));
      if (!ok1 || !ok2 || o.size.width() < 400 || o.size.height() < 200 || o.size.width() > 16384 || o.size.height() > 16384)
        return fail(QStringLiteral("--size %1: expected WxH, at least 400x200").arg(parser.value(size)));
    }
    if (parser.isSet(range) && parser.value(range) == QStringLiteral("all")) {
      o.whole = true;
    } else if (parser.isSet(range)) {
      const QStringList ab = parser.value(range).split(QLatin1Char(':'));
      if (ab.size() != 2 || !gpuscope::gui::parse_time(ab[0].toStdString(), o.range_start) ||
          !gpuscope::gui::parse_time(ab[1].toStdString(), o.range_end) || o.range_end <= o.range_start)
        return fail(QStringLiteral("--range %1: expected A:B with A < B, e.g. 1.2:1.5 or 100ms:250ms, or all").arg(parser.value(range)));
      o.has_range = true;
    }
    QString error;
    int rc = gpuscope::gui::take_screenshot(o, &error);
    if (rc != 0) return fail(error);
    return 0;
  }
  if (parser.isSet(range) || parser.isSet(size) || parser.isSet(timeline_only))
    return fail(QStringLiteral("--range, --size and --timeline-only go with --screenshot"));

  gpuscope::gui::MainWindow window;
  window.show();
  if (!args.isEmpty()) window.openFile(args.first());
  return app.exec();
}
