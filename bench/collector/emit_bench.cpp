// What one op record costs the application thread: emit_op (the path the torch
// plugin's host uses) in a tight loop, in rounds of N records, the ring drained
// between rounds the way the writer thread would (without writing anything).
// The first rounds also pay the ring's first-touch page faults; the later ones
// show the steady state. The last line times the drop path (ring full).
//   emit_bench [records_per_round] [rounds]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "collector/cpu_records.h"
#include "collector/emit.h"
#include "collector/thread_slots.h"

using namespace gpuscope::collector;

namespace {

double ns_per_emit(int n) {
  OpRecord r{};
  r.start = 1;
  r.end = 2;
  r.seq_nr = -1;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) emit_op(r, "aten::add", "[[4],[4],[]]", "[\"float\",\"float\",\"Scalar\"]");
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
}

uint64_t drain_all() {
  uint64_t n = 0;
  for (int s = 0; s < kMaxThreadSlots; ++s)
    if (thread_slots()[s].ring.ready()) n += thread_slots()[s].ring.drain([](const RecordHeader&) {});
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 8;
  g_enabled.store(true);
  for (int r = 0; r < rounds; ++r) {
    const double ns = ns_per_emit(n);
    std::printf("round %d: %.1f ns per op record (%llu drained)\n", r, ns, static_cast<unsigned long long>(drain_all()));
  }
  // Fill the ring, then time records that are dropped.
  while (ns_per_emit(n) > 0 && current_slot() && current_slot()->dropped.load() == 0) {
  }
  std::printf("drop path (ring full): %.1f ns per op record\n", ns_per_emit(n));
}
