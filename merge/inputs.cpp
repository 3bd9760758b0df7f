#include "merge/inputs.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <map>

#include "trace_formats/common/error.h"
#include "trace_formats/schema/meta_keys.h"
#include "trace_formats/store/cursor.h"

namespace gpuscope::merge {
namespace {

// "2026-12-03 22:05:28 UTC", for a refusal a person reads.
std::string utc_text(int64_t ns) {
  const time_t s = static_cast<time_t>(ns / 1'000'000'000);
  tm t{};
  gmtime_r(&s, &t);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &t);
  return buf;
}

std::string rank_list(const std::vector<int64_t>& r) {
  if (r.empty()) return "no ranks";
  bool contiguous = true;
  for (size_t i = 1; i < r.size(); ++i) contiguous = contiguous && r[i] == r[i - 1] + 1;
  if (r.size() == 1) return "rank " + std::to_string(r[0]);
  if (contiguous) return "ranks " + std::to_string(r.front()) + "-" + std::to_string(r.back());
  std::string s = "ranks ";
  for (size_t i = 0; i < r.size(); ++i) s += (i ? "," : "") + std::to_string(r[i]);
  return s;
}

}  // namespace

std::vector<int64_t> Input::ranks() const {
  std::vector<int64_t> r;
  for (const auto& p : processes)
    if (p.rank >= 0) r.push_back(p.rank);
  std::sort(r.begin(), r.end());
  return r;
}

std::string Input::describe() const {
  return path + " (host " + (host.empty() ? "unknown" : host) + ", " + rank_list(ranks()) + ")";
}

Input open_input(const std::string& path) {
  Input in;
  in.path = path;
  in.reader = std::make_unique<store::Reader>(path);
  in.host = in.reader->meta(meta_key::kHost);
  in.job_key = in.reader->meta(meta_key::kJobKey);
  const int64_t origin_utc = std::atoll(in.reader->meta(meta_key::kOriginUtcNs, "0").c_str());
  using P = store::rec::Process;
  store::Cursor<P> st(in.reader->db(), {P::kPid, P::kRank, P::kWorldSize, P::kHost, P::kStart, P::kEnd},
                      "ORDER BY pid");
  int64_t first = INT64_MAX, last = INT64_MIN;
  while (st.next()) {
    InputProcess p;
    p.pid = st->pid;
    if (!st->null(P::kRank)) p.rank = st->rank;
    if (!st->null(P::kWorldSize)) p.world_size = st->world_size;
    p.host = std::string(st->host);
    if (!st->null(P::kStart)) first = std::min(first, st->start);
    if (!st->null(P::kEnd)) last = std::max(last, st->end);
    in.processes.push_back(std::move(p));
  }
  if (origin_utc > 0 && first <= last) {
    in.utc_first = origin_utc + first;
    in.utc_last = origin_utc + last;
  }
  return in;
}

void check_same_job(const std::vector<Input>& inputs) {
  std::vector<std::pair<dev_t, ino_t>> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    struct stat st {};
    if (::stat(inputs[i].path.c_str(), &st) != 0) continue;
    for (size_t j = 0; j < ids.size(); ++j)
      if (ids[j] == std::make_pair(st.st_dev, st.st_ino))
        throw Error(inputs[i].path + ": given twice (the same file as " + inputs[j].path + ")");
    ids.emplace_back(st.st_dev, st.st_ino);
  }
  std::map<int64_t, const Input*> rank_owner;
  const Input* keyed = nullptr;  // the first file with a job key
  const Input* sized = nullptr;  // the first file with a world size
  int64_t world_size = -1;
  for (const Input& in : inputs) {
    if (in.ranks().empty())
      throw Error(in.path + ": no process with a rank (RANK unset): not a node of a distributed job");
    if (!in.job_key.empty()) {
      if (keyed && keyed->job_key != in.job_key)
        throw Error(in.path + ": another job than " + keyed->path + " (job_key '" + in.job_key + "', not '" +
                    keyed->job_key + "')");
      if (!keyed) keyed = &in;
    }
    for (const InputProcess& p : in.processes) {
      if (p.world_size < 0) continue;
      if (sized && p.world_size != world_size)
        throw Error(in.path + ": another job than " + sized->path + " (world size " +
                    std::to_string(p.world_size) + ", not " + std::to_string(world_size) + ")");
      if (!sized) sized = &in, world_size = p.world_size;
    }
    for (int64_t r : in.ranks()) {
      auto [it, fresh] = rank_owner.emplace(r, &in);
      if (!fresh && it->second != &in)
        throw Error(in.path + ": rank " + std::to_string(r) + " is also in " + it->second->path +
                    " (the same node twice, or another job)");
    }
  }
  // One job's nodes ran at the same time; a rerun with the same launcher
  // settings (same job key) did not.
  const Input& ref = inputs.front();
  for (const Input& in : inputs) {
    if (&in == &ref || !ref.utc_first || !in.utc_first) continue;
    if (in.utc_first > ref.utc_last + kSameTimeSlackNs || ref.utc_first > in.utc_last + kSameTimeSlackNs)
      throw Error(in.path + ": recorded at another time than " + ref.path + " (" + utc_text(in.utc_first) +
                  ", not " + utc_text(ref.utc_first) + "): another job");
  }
}

}  // namespace gpuscope::merge
