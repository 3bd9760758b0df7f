#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "common/text.h"
#include "import/open_recording.h"
#include "schema/enums.h"
#include "schema/schema.h"
#include "store/reader.h"

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

void print_info(const std::string& path, const std::string& database) {
  store::Reader r(database);
  auto& db = r.db();
  std::printf("file            %s\n", path.c_str());
  std::printf("schema version  %d\n", r.schema_version());
  std::printf("gpuscope        %s\n", terminal_safe(r.meta("gpuscope_version", "?")).c_str());
  std::printf("source          %s\n", terminal_safe(r.meta("source", "gpuscope record")).c_str());
  // Duration over every timed table.
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const char* t : {"kernel", "memcpy", "memset", "api_call", "range", "op", "sync"}) {
    auto st = r.query("SELECT min(start), max(\"end\") FROM \"" + std::string(t) + "\"");
    if (st.step() && !st.is_null(0)) {
      lo = std::min(lo, st.int64(0));
      hi = std::max(hi, st.int64(1));
    }
  }
  std::printf("duration        %s\n", lo <= hi ? human_ns(hi - lo).c_str() : "no timed events");
  // Sampled or windowed recordings: how much of the job was traced.
  auto traced = r.query("SELECT count(*), sum(\"end\" - start) FROM range WHERE source = " +
                        std::to_string(schema::range_source::sampling_window));
  if (traced.step() && traced.int64(0) > 0) {
    std::string sample = terminal_safe(r.meta("sample", ""));
    // Between stretches CUPTI is torn down where it safely can be (docs/ARCHITECTURE.md).
    auto teardowns = r.query("SELECT coalesce(sum(value), 0) FROM collector_stat WHERE key = 'cupti_finalizes'");
    const long long torn = teardowns.step() ? teardowns.int64(0) : 0;
    std::printf("traced          %s in %lld stretch(es)%s%s\n", human_ns(traced.int64(1)).c_str(),
                static_cast<long long>(traced.int64(0)), sample.empty() ? "" : (" (--sample " + sample + ")").c_str(),
                torn > 0 ? (", CUPTI torn down " + std::to_string(torn) + " time(s) while untraced").c_str() : "");
  }

  std::printf("\ndevices\n");
  auto dev = r.query("SELECT id, name, sm_count, total_memory, compute_major, compute_minor FROM device ORDER BY id");
  int ndev = 0;
  while (dev.step()) {
    ++ndev;
    std::printf("  %lld  %s, %lld SMs, %s, sm_%lld%lld\n", (long long)dev.int64(0),
                terminal_safe(dev.text(1)).c_str(), (long long)dev.int64(2),
                format_bytes(static_cast<double>(dev.int64(3))).c_str(), (long long)dev.int64(4),
                (long long)dev.int64(5));
  }
  if (ndev == 0) std::printf("  none recorded\n");

  std::printf("\nprocesses\n");
  auto proc = r.query("SELECT pid, host, rank, local_rank, world_size, cupti_status, cmdline FROM process ORDER BY pid");
  while (proc.step()) {
    std::string rank = proc.is_null(2) ? "" : "  rank " + std::to_string(proc.int64(2)) + "/" +
                                                  (proc.is_null(4) ? "?" : std::to_string(proc.int64(4)));
    std::string cmd = terminal_safe(proc.text(6));
    if (cmd.size() > 60) cmd = cmd.substr(0, 57) + "...";
    std::printf("  pid %lld on %s%s  cupti: %s  %s\n", (long long)proc.int64(0),
                terminal_safe(proc.text(1)).c_str(), rank.c_str(), terminal_safe(proc.text(5)).c_str(),
                cmd.c_str());
  }

  std::printf("\nrows\n");
  for (const auto& t : schema::tables()) {
    if (t.name == "meta" || t.name == "enum") continue;
    std::printf("  %-22s %lld\n", std::string(t.name).c_str(), (long long)r.count(t.name));
  }

  int64_t dropped = db.query_int("SELECT coalesce(sum(value),0) FROM collector_stat WHERE key LIKE 'dropped%'").value_or(0);
  std::printf("\ndropped records %lld\n", (long long)dropped);
  auto msg = r.query("SELECT pid, text FROM message ORDER BY ts");
  while (msg.step())
    std::printf("note: pid %lld: %s\n", (long long)msg.int64(0), terminal_safe(msg.text(1)).c_str());
}

}  // namespace

static void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Summarize a recording: duration, devices, processes, row counts, drops");
  static std::string path;
  cmd->add_option("recording", path, "A gpuscope recording or a torch.profiler trace (.json, .json.gz)")->required();
  cmd->callback([] {
    const formats::OpenedRecording input = formats::open_recording(path, true);
    input.read([&] { print_info(path, input.path()); });
  });
}

namespace {
CommandRegistrar registrar(20, add_info_command);
}  // namespace

}  // namespace gpuscope::cli
