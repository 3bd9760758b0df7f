// Hotspot tables: top kernels, top ops, copies by direction and memory kind,
// CUDA API calls by total time. Aggregated by string id, named at the end.
#include "analyzer/hotspots.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "trace_formats/schema/enums.h"

namespace gpuscope::analyzer {
namespace {

// The schema's names; a code it does not name reads as `unknown`.
std::string_view copy_kind_name(uint8_t k) {
  const std::string_view name = schema::copy_kind::name(k);
  return name.empty() ? schema::copy_kind::name(schema::copy_kind::unknown) : name;
}

std::string_view mem_kind_name(uint8_t k) {
  const std::string_view name = schema::mem_kind::name(k);
  return name.empty() ? schema::mem_kind::name(schema::mem_kind::unknown) : name;
}

std::string triple(uint32_t a, uint32_t b, uint32_t c) {
  return std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c);
}

}  // namespace

std::vector<KernelStat> top_kernels(const Context& c, size_t n) {
  struct Acc {
    int64_t count = 0, total = 0, min = INT64_MAX, max = 0;
  };
  std::unordered_map<uint32_t, Acc> by;
  int64_t all = 0;
  for (uint32_t i : c.kernels) {
    const KernelRec& k = c.m.kernels[i];
    Acc& a = by[k.name];
    a.count++;
    a.total += k.dur;
    a.min = std::min<int64_t>(a.min, k.dur);
    a.max = std::max<int64_t>(a.max, k.dur);
    all += k.dur;
  }
  std::vector<std::pair<uint32_t, Acc>> v(by.begin(), by.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second.total != b.second.total ? a.second.total > b.second.total : a.first < b.first;
  });
  std::vector<KernelStat> out;
  for (size_t i = 0; i < v.size() && i < n; ++i) {
    const auto& [name, a] = v[i];
    KernelStat s;
    s.name = c.name(name);
    const KernelClass& kc = c.kc(name);
    s.origin = origin_name(kc.origin);
    s.tensor_core = kc.has(kTensorCore);
    s.count = a.count;
    s.total_ns = a.total;
    s.min_ns = a.min;
    s.max_ns = a.max;
    s.mean_ns = static_cast<double>(a.total) / static_cast<double>(a.count);
    s.share = all > 0 ? static_cast<double>(a.total) / static_cast<double>(all) : 0;
    if (name < c.m.kernel_config.size()) {
      const auto& g = c.m.kernel_config[name];
      s.grid = triple(g[0], g[1], g[2]);
      s.block = triple(g[3], g[4], g[5]);
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<OpStat> top_ops(const Context& c, size_t n) {
  struct Acc {
    int64_t count = 0, self = 0, cpu = 0, gpu = 0, kernels = 0;
  };
  std::unordered_map<uint32_t, Acc> by;
  std::unordered_map<uint64_t, int64_t> shapes, dtypes;  // name<<32 | string id -> count
  for (uint32_t i : c.ops) {
    const OpRec& o = c.m.ops[i];
    Acc& a = by[o.name];
    a.count++;
    a.self += c.m.op_self[i];
    a.cpu += o.end - o.start;
    if (o.shapes != kNone) shapes[(uint64_t{o.name} << 32) | o.shapes]++;
    if (o.dtypes != kNone) dtypes[(uint64_t{o.name} << 32) | o.dtypes]++;
  }
  if (!c.m.op_by_corr.empty()) {
    for (uint32_t i : c.kernels) {
      const KernelRec& k = c.m.kernels[i];
      uint32_t op = c.op_of_corr(k.corr);
      if (op == kNone) continue;
      Acc& a = by[c.m.ops[op].name];
      a.gpu += k.dur;
      a.kernels++;
    }
  }
  auto most_frequent = [](const std::unordered_map<uint64_t, int64_t>& m) {
    std::unordered_map<uint32_t, std::pair<int64_t, uint32_t>> best;  // name -> (count, id)
    for (const auto& [key, count] : m) {
      auto name = static_cast<uint32_t>(key >> 32), id = static_cast<uint32_t>(key);
      auto& b = best[name];
      if (count > b.first || (count == b.first && id < b.second)) b = {count, id};
    }
    return best;
  };
  auto best_shapes = most_frequent(shapes), best_dtypes = most_frequent(dtypes);
  std::vector<std::pair<uint32_t, Acc>> v(by.begin(), by.end());
  // Ranked by what the op costs: GPU time of its kernels plus its own CPU time.
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    int64_t x = a.second.gpu + a.second.self, y = b.second.gpu + b.second.self;
    return x != y ? x > y : a.first < b.first;
  });
  std::vector<OpStat> out;
  for (size_t i = 0; i < v.size() && i < n; ++i) {
    const auto& [name, a] = v[i];
    OpStat s;
    s.name = c.name(name);
    s.count = a.count;
    s.self_cpu_ns = a.self;
    s.cpu_ns = a.cpu;
    s.gpu_ns = a.gpu;
    s.kernels = a.kernels;
    if (auto it = best_shapes.find(name); it != best_shapes.end()) s.shapes = c.name(it->second.second);
    if (auto it = best_dtypes.find(name); it != best_dtypes.end()) s.dtypes = c.name(it->second.second);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<CopyStat> copy_stats(const Context& c) {
  std::map<std::tuple<bool, uint8_t, uint8_t, uint8_t>, CopyStat> by;
  for (uint32_t i : c.copies) {
    const CopyRec& x = c.m.copies[i];
    auto key = std::make_tuple(x.memset, x.memset ? uint8_t{0} : x.copy_kind, x.memset ? uint8_t{0} : x.src_kind, x.dst_kind);
    CopyStat& s = by[key];
    if (s.count == 0) {
      s.kind = x.memset ? "memset" : "memcpy";
      s.direction = x.memset ? "" : copy_kind_name(x.copy_kind);
      s.src_kind = x.memset ? "" : mem_kind_name(x.src_kind);
      s.dst_kind = mem_kind_name(x.dst_kind);
    }
    s.count++;
    s.bytes += x.bytes;
    s.total_ns += x.dur;
  }
  std::vector<CopyStat> out;
  for (auto& [key, s] : by) {
    s.gb_per_s = s.total_ns > 0 ? static_cast<double>(s.bytes) / static_cast<double>(s.total_ns) : 0;
    out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(), [](const CopyStat& a, const CopyStat& b) { return a.total_ns > b.total_ns; });
  return out;
}

std::vector<ApiStat> api_stats(const Context& c, size_t n) {
  struct Acc {
    int64_t count = 0, total = 0, max = 0, failed = 0;
  };
  std::unordered_map<uint32_t, Acc> by;
  for (uint32_t i : c.apis) {
    const ApiRec& a = c.m.apis[i];
    Acc& s = by[a.name];
    s.count++;
    s.total += a.dur;
    s.max = std::max<int64_t>(s.max, a.dur);
    s.failed += a.failed;
  }
  std::vector<std::pair<uint32_t, Acc>> v(by.begin(), by.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second.total != b.second.total ? a.second.total > b.second.total : a.first < b.first;
  });
  std::vector<ApiStat> out;
  for (size_t i = 0; i < v.size() && i < n; ++i) {
    const auto& [name, a] = v[i];
    out.push_back({c.name(name), a.count, a.total, a.max, a.failed, static_cast<double>(a.total) / static_cast<double>(a.count)});
  }
  return out;
}

}  // namespace gpuscope::analyzer
