// `gpuscope view [run.db | trace.json.gz] [--screenshot out.png ...]`: runs the
// Qt viewer, gpuscope-view, from the folder of this binary. The CLI itself
// never links Qt, so it builds where the viewer cannot.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/doctor/probes.h"
#include "trace_formats/common/atomic_file.h"

namespace gpuscope::cli {
namespace {

struct ViewOptions {
  std::string recording, screenshot, range, size;
  bool force = false;
};

int run_viewer(const ViewOptions& o) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string viewer = (self.parent_path() / "gpuscope-view").string();
  if (ec || access(viewer.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "gpuscope view: the viewer (gpuscope-view) was not built; it needs Qt6 Widgets "
                 "(configure with -DGPUSCOPE_WITH_GUI=ON)\n");
    return 2;
  }
  // Without its Qt libraries the loader would stop the viewer with a message
  // about one of them; name them all, and what to do, in one line.
  const doctor::ViewerProbe probe = doctor::probe_viewer(viewer);
  if (!probe.missing.empty()) {
    std::string libs;
    for (const auto& m : probe.missing) libs += (libs.empty() ? "" : ", ") + m;
    std::fprintf(stderr,
                 "gpuscope view: %s cannot start: this machine lacks %s (Ubuntu/Debian: apt-get install "
                 "libqt6widgets6 libqt6opengl6), or open the recording on a machine with Qt 6, or use "
                 "`gpuscope export` for Perfetto\n",
                 viewer.c_str(), libs.c_str());
    return 2;
  }
  std::vector<std::string> args{viewer};
  if (!o.recording.empty()) args.push_back(o.recording);
  if (!o.screenshot.empty()) args.insert(args.end(), {"--screenshot", o.screenshot});
  if (!o.range.empty()) args.insert(args.end(), {"--range", o.range});
  if (!o.size.empty()) args.insert(args.end(), {"--size", o.size});
  if (o.force) args.push_back("--force");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  execv(viewer.c_str(), argv.data());
  std::fprintf(stderr, "gpuscope view: cannot run %s: %s\n", viewer.c_str(), std::strerror(errno));
  return 2;
}

}  // namespace

static void add_view_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "view", "Open the timeline viewer (Qt6) on a recording or a torch.profiler trace");
  static ViewOptions o;
  cmd->add_option("recording", o.recording, "run.db, or a torch.profiler trace (.json, .json.gz)");
  cmd->add_option("--screenshot", o.screenshot,
                  "Render offscreen into this PNG and exit (no display needed)");
  cmd->add_option("--range", o.range,
                  "Time range A:B to show in the screenshot, seconds since the recording's origin "
                  "or with a unit: 1.2:1.5, 100ms:250ms")
      ->needs("--screenshot");
  cmd->add_option("--size", o.size, "Screenshot size WxH (default 1400x860)")->needs("--screenshot");
  cmd->add_flag("--force", o.force, "Overwrite an existing screenshot");
  cmd->callback([] {
    if (!o.screenshot.empty() && o.recording.empty())
      throw CLI::ValidationError("--screenshot", "needs a recording to render");
    // The viewer refuses an existing screenshot without --force; the recording itself never.
    check_outputs({o.screenshot}, {o.recording}, true);
    exit_code = run_viewer(o);
  });
}

namespace {
CommandRegistrar registrar(70, add_view_command);
}  // namespace

}  // namespace gpuscope::cli
