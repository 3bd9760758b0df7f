// cluster_bench_gen DIR RANKS [options]: a synthetic data-parallel job of RANKS
// ranks on the GPU, one recording per node (DIR/node_NNNN.db, --ranks-per-file
// ranks each), for `gpuscope cluster` (bench/cluster/run_bench.sh and
// tests/cluster/). Every step a rank loads its batch, runs its forward and
// backward kernels, all-reduces the gradients over gloo and steps the
// optimizer; the ranks leave each all-reduce together, when the slowest one
// arrived. One rank (--straggler) loads its data --straggler-ms slower, so the
// others wait for it. One job key, one clock: the files merge with offset 0.
//   --ranks-per-file K   ranks per recording (default 1)
//   --steps S            steps per rank (default 30)
//   --kernels K          kernels per step (default 40)
//   --straggler R        the slow rank (default 2; -1 none)
//   --straggler-ms MS    its extra data time per step (default 20)
//   --combined PATH      also every rank in one recording
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/analyzer/sim.h"
#include "trace_formats/schema/meta_keys.h"

using namespace gpuscope;
using namespace gpuscope::testing;

namespace {

struct Job {
  int ranks = 0, ranks_per_file = 1, steps = 30, kernels = 40, straggler = 2;
  double straggler_ms = 20;
};

constexpr int64_t kFirstPid = 20000;

std::string host_of(const Job& job, int rank) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "node%04d", rank / job.ranks_per_file);
  return buf;
}

void write_rank(const Job& job, int r, const std::string& path, bool append) {
  Sim::Config cfg;
  cfg.pid = kFirstPid + r;
  cfg.rank = r;
  cfg.world_size = job.ranks;
  cfg.host = host_of(job, r);
  cfg.append = append;
  Sim s(path, cfg);
  s.recording().meta(meta_key::kJobKey, "cluster-bench-" + std::to_string(job.ranks)).meta(meta_key::kHost, cfg.host);
  const int64_t data = us(300), enqueue = us(50), transfer = us(500), optimizer = us(400);
  const int64_t kernel = us(300), extra = r == job.straggler ? ms(job.straggler_ms) : 0;
  const int64_t slowest = job.straggler >= 0 && job.straggler < job.ranks ? ms(job.straggler_ms) : 0;
  // Forward and backward take as long on every rank: the launches, then the
  // wait for the GPU to drain them, padded to a fixed length.
  const int64_t work = job.kernels * (kernel + s.cfg.launch_cpu_ns) + us(100);
  int64_t t = ms(1);
  for (int k = 0; k < job.steps; ++k) {
    s.cpu(t - s.now());
    s.step_begin();
    s.dataloader(data + extra);
    const int64_t c0 = s.now();
    s.op_begin("aten::linear");
    for (int i = 0; i < job.kernels; ++i) s.kernel(i % 2 ? names::kGemmBf16 : names::kAdd, kernel);
    s.op_end();
    s.sync();
    s.cpu(std::max<int64_t>(0, c0 + work - s.now()));
    const int64_t arrive = s.now();
    s.op("c10d::allreduce_", enqueue);
    // Everyone has arrived when the slowest rank enqueued; the transfer follows.
    const int64_t done = t + data + slowest + work + enqueue + us(4) + transfer;
    s.range(2, "gloo:all_reduce", arrive + us(10), done, 0, cfg.pid + 100);  // the gloo worker thread
    s.cpu(done - s.now());
    s.op("Optimizer.step#SGD.step", optimizer);
    s.step_end();
    t = done + optimizer + us(10);
  }
  s.recording().writer().put_stat(cfg.pid, "records_kernel", static_cast<int64_t>(job.steps) * job.kernels);
  s.finish();
}

int usage() {
  std::fprintf(stderr,
               "usage: cluster_bench_gen DIR RANKS [--ranks-per-file K] [--steps S] [--kernels K] [--straggler R]\n"
               "                         [--straggler-ms MS] [--combined PATH]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::filesystem::path dir = argv[1];
  Job job;
  job.ranks = std::atoi(argv[2]);
  std::string combined;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--ranks-per-file") job.ranks_per_file = std::max(1, std::atoi(v.c_str()));
    else if (k == "--steps") job.steps = std::max(3, std::atoi(v.c_str()));
    else if (k == "--kernels") job.kernels = std::max(1, std::atoi(v.c_str()));
    else if (k == "--straggler") job.straggler = std::atoi(v.c_str());
    else if (k == "--straggler-ms") job.straggler_ms = std::atof(v.c_str());
    else if (k == "--combined") combined = v;
    else return usage();
  }
  if (job.ranks < 2 || (argc - 3) % 2 != 0) return usage();
  std::filesystem::create_directories(dir);
  for (int r = 0; r < job.ranks; ++r) {
    char name[32];
    std::snprintf(name, sizeof name, "node_%04d.db", r / job.ranks_per_file);
    const std::string path = (dir / name).string();
    const bool first = r % job.ranks_per_file == 0;
    if (first)
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    write_rank(job, r, path, !first);
    if (!combined.empty()) {
      if (r == 0)
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(combined + suffix);
      write_rank(job, r, combined, r > 0);
    }
  }
  std::printf("%d ranks in %d recordings under %s%s%s\n", job.ranks,
              (job.ranks + job.ranks_per_file - 1) / job.ranks_per_file, dir.c_str(), combined.empty() ? "" : ", all in ",
              combined.c_str());
  return 0;
}
