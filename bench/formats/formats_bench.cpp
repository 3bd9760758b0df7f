// Times one import or export of the trace-format library:
//   formats_bench import TRACE.json[.gz] OUT.db
//   formats_bench chrome RUN.db OUT.json[.gz]
//   formats_bench perfetto RUN.db OUT.pftrace
// One line of results on stdout; bench/formats/run_bench.sh adds /usr/bin/time.
#include <cstdio>
#include <string>

#include "trace_formats/common/error.h"
#include "trace_formats/export/exporters.h"
#include "trace_formats/import/torch_import.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: formats_bench import|chrome|perfetto INPUT OUTPUT\n");
    return 2;
  }
  std::string mode = argv[1], in = argv[2], out = argv[3];
  try {
    if (mode == "import") {
      gpuscope::formats::ImportOptions opt;
      opt.force = true;
      auto r = gpuscope::formats::import_torch_trace(in, out, opt);
      std::printf("import %s: %llu bytes JSON, %lld events, %.3f s, %.1f MB/s\n", in.c_str(),
                  (unsigned long long)r.read.bytes, (long long)r.counts.events, r.seconds,
                  double(r.read.bytes) / 1e6 / r.seconds);
    } else {
      gpuscope::store::Reader db(in);
      gpuscope::formats::ExportOptions opt;
      opt.force = true;
      auto s = mode == "chrome" ? gpuscope::formats::export_chrome(db, out, opt)
                                : gpuscope::formats::export_perfetto(db, out, opt);
      std::printf("%s %s: %llu events, %llu bytes (%llu before compression), %.3f s, %.2f M events/s\n",
                  mode.c_str(), out.c_str(), (unsigned long long)s.events, (unsigned long long)s.bytes,
                  (unsigned long long)s.raw_bytes, s.seconds, double(s.events) / 1e6 / s.seconds);
    }
  } catch (const gpuscope::Error& e) {
    std::fprintf(stderr, "formats_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
