#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/live_recording.h"
#include "trace_formats/common/text.h"
#include "trace_formats/import/open_recording.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/summary.h"

namespace gpuscope::cli {
namespace {

std::string human_ns(int64_t ns) {
  char buf[64];
  if (ns >= 1'000'000'000)
    std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ns) / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

void print_info(const std::string& path, const std::string& database, bool live) {
  store::Reader recording(database);
  const store::RecordingSummary s = store::summarize(recording);
  std::printf("file            %s\n", terminal_safe(path).c_str());
  std::printf("schema version  %d\n", s.schema_version);
  std::printf("gpuscope        %s\n", terminal_safe(s.gpuscope_version).c_str());
  std::printf("source          %s\n", terminal_safe(s.source).c_str());
  if (s.job)
    std::printf("job             %s%s\n", s.job->failed() ? "FAILED: " : s.job->stopped() ? "stopped: " : "", s.job->describe().c_str());
  std::printf("duration        %s\n", s.span ? human_ns(s.span->end - s.span->start).c_str() : "no timed events");
  if (s.traced) {
    const std::string sample = terminal_safe(s.traced->sample);
    const long long torn = s.traced->cupti_teardowns;
    std::printf("traced          %s in %lld stretch(es)%s%s\n", human_ns(s.traced->ns).c_str(),
                static_cast<long long>(s.traced->stretches), sample.empty() ? "" : (" (--sample " + sample + ")").c_str(),
                torn > 0 ? (", CUPTI torn down " + std::to_string(torn) + " time(s) while untraced").c_str() : "");
    if (s.traced->cupti_teardowns_failed > 0)
      std::printf("                %lld teardown(s) given up (a drain or decode failed): CUPTI stayed subscribed and "
                  "untraced steps paid its launch cost\n",
                  static_cast<long long>(s.traced->cupti_teardowns_failed));
    if (s.traced->closed_by_reader)
      std::fputs(live ? "                the last stretch is open (the job is still being recorded): counted to the "
                        "last event written so far\n"
                      : "                the last stretch was left open (the job was killed inside it): counted to "
                        "the last recorded event\n",
                 stdout);
  }

  std::printf("\ndevices\n");
  for (const auto& d : s.devices)
    std::printf("  %lld  %s, %lld SMs, %s, sm_%lld%lld\n", (long long)d.id, terminal_safe(d.name).c_str(),
                (long long)d.sm_count, format_bytes(static_cast<double>(d.total_memory)).c_str(),
                (long long)d.compute_major, (long long)d.compute_minor);
  if (s.devices.empty()) std::printf("  none recorded\n");

  std::printf("\nprocesses\n");
  for (const auto& p : s.processes) {
    std::string rank = p.rank ? "  rank " + std::to_string(*p.rank) + "/" +
                                    (p.world_size ? std::to_string(*p.world_size) : "?")
                              : "";
    std::string cmd = terminal_safe(p.cmdline);
    if (cmd.size() > 60) cmd = cmd.substr(0, 57) + "...";
    std::printf("  pid %lld on %s%s  cupti: %s  %s\n", (long long)p.pid, terminal_safe(p.host).c_str(),
                rank.c_str(), terminal_safe(p.cupti_status).c_str(), cmd.c_str());
  }

  std::printf("\nrows\n");
  for (const auto& t : s.rows) std::printf("  %-22s %lld\n", t.table.c_str(), (long long)t.count);

  std::printf("\ndropped records %lld\n", (long long)s.dropped);
  for (const auto& m : s.messages)
    std::printf("note: pid %lld: %s\n", (long long)m.pid, terminal_safe(m.text).c_str());
}

}  // namespace

static void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Summarize a recording: duration, devices, processes, row counts, drops");
  static std::string path;
  static bool wait = false;
  cmd->add_option("recording", path, "A gpuscope recording or a torch.profiler trace (.json, .json.gz)")->required();
  cmd->add_flag("--wait", wait, kWaitHelp);
  cmd->callback([] {
    const bool live = handle_live_recording(path, wait);
    const formats::OpenedRecording input = formats::open_recording(path, true);
    input.read([&] { print_info(path, input.path(), live); });
  });
}

namespace {
CommandRegistrar registrar(20, add_info_command);
}  // namespace

}  // namespace gpuscope::cli
