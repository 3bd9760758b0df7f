// Clock alignment of per-node recordings of one distributed job. Each host's
// clock has its own origin; every rank of the job leaves a collective at about
// the same moment, so the k-th collective's end on the ranks of one file and on
// those of another gives the offset between their clocks.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::store {
class Reader;
}

namespace gpuscope::merge {

// Where collective ends come from, the most precise first: NCCL kernels end on
// the GPU when the collective does; ProcessGroup work (`gloo:all_reduce`, op or
// record_function range) ends when the backend finished it; c10d ops
// (`c10d::allreduce_`) may end when the work was only queued.
enum class Source { kNcclKernel, kWork, kC10dOp };
inline constexpr size_t kSources = 3;
const char* source_name(Source s);
// Which source a kernel, op or range name belongs to, if any.
std::optional<Source> kernel_source(std::string_view name);
std::optional<Source> cpu_source(std::string_view name);

// One collective on one rank: `nth` occurrence of `name` (table-qualified, e.g.
// "range:gloo:all_reduce") within step `step` (the step it began in, -1 before
// the first step); keyed by order, `step` is always -1 and `nth` counts from
// the start.
struct CollectiveKey {
  int64_t step = -1;
  std::string name;
  int64_t nth = 0;
  auto operator<=>(const CollectiveKey&) const = default;
};

// One event as read from a recording, before keys are given.
struct CollectiveEvent {
  int64_t pid = 0;
  Source source = Source::kWork;
  std::string name;
  int64_t start = 0;  // when the rank began it on the CPU (a kernel: its launch), which orders and places it in a step
  int64_t end = 0;
};

// A file's collectives: per source and key, the end on each rank that has it
// (by_step: only ranks with steps).
struct FileCollectives {
  using Ends = std::map<CollectiveKey, std::vector<int64_t>>;
  std::array<Ends, kSources> by_step, by_order;
  size_t events = 0;
};

// Keys events by step (the step table's numbers per pid; `steps` maps a pid to
// its (start, number) pairs in start order) and by order.
FileCollectives key_collectives(std::vector<CollectiveEvent> events,
                                const std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>>& steps);
// Reads the collectives of every process of a recording.
FileCollectives read_collectives(store::Reader& reader);

struct Alignment {
  Source source = Source::kWork;
  int64_t offset_ns = 0;         // add to the other file's times to put them on the reference's clock
  int64_t residual_ns = 0;       // median |deviation| of the matched ends from the offset
  int64_t max_deviation_ns = 0;  // the largest one
  size_t collectives = 0;        // collectives matched
  size_t pairs = 0;              // (reference rank, other rank) pairs over them
  bool by_step = true;           // matched within steps, else by order from the start
};

// The median over matched collectives and rank pairs of (reference end - other
// end), from the most precise source both files have; keys within steps first,
// by order from the start when no step matches. nullopt: no shared collective.
std::optional<Alignment> align(const FileCollectives& reference, const FileCollectives& other);

}  // namespace gpuscope::merge
