#include "trace_formats/import/kineto_names.h"

#include <charconv>
#include <climits>

namespace gpuscope::formats {

namespace {

namespace copy_kind = schema::copy_kind;
namespace mem_kind = schema::mem_kind;
namespace sync_type = schema::sync_type;
namespace step_source = schema::step_source;

// Kineto's spellings, indexed by the schema's copy_kind / mem_kind / sync_type
// codes (CUPTI's own numbering, from 0 without gaps).
constexpr std::string_view kCopyKinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                           "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
constexpr std::string_view kMemKinds[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                          "Array",   "Managed",  "Device Static", "Managed Static"};
constexpr std::string_view kSyncNames[] = {"Unknown Sync", "Event Sync", "Stream Wait Event", "Stream Sync",
                                           "Context Sync"};
static_assert(copy_kind::unknown == 0 && std::size(kCopyKinds) == copy_kind::PtoP + 1 &&
              kCopyKinds[copy_kind::HtoD] == "HtoD" && kCopyKinds[copy_kind::PtoP] == "PtoP");
static_assert(mem_kind::unknown == 0 && std::size(kMemKinds) == mem_kind::managed_static + 1 &&
              kMemKinds[mem_kind::pageable] == "Pageable" && kMemKinds[mem_kind::device] == "Device");
static_assert(sync_type::unknown == 0 && std::size(kSyncNames) == sync_type::context_synchronize + 1 &&
              kSyncNames[sync_type::stream_synchronize] == "Stream Sync");

bool starts_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}

int64_t lookup_mem_kind(std::string_view s) {
  if (s == "Pagable") return mem_kind::pageable;  // Kineto's own spelling in some releases
  for (size_t i = 0; i < std::size(kMemKinds); ++i)
    if (s == kMemKinds[i]) return static_cast<int64_t>(i);
  return mem_kind::unknown;
}

}  // namespace

std::string_view copy_kind_name(int64_t k) {
  return k >= 0 && k < static_cast<int64_t>(std::size(kCopyKinds)) ? kCopyKinds[k] : kCopyKinds[0];
}

std::string_view mem_kind_name(int64_t k) {
  return k >= 0 && k < static_cast<int64_t>(std::size(kMemKinds)) ? kMemKinds[k] : kMemKinds[0];
}

MemcpyKinds parse_memcpy_name(std::string_view name) {
  MemcpyKinds k;
  if (!starts_with(name, "Memcpy ")) return k;
  std::string_view rest = name.substr(7);
  size_t sp = rest.find(' ');
  std::string_view kind = rest.substr(0, sp);
  for (size_t i = 0; i < std::size(kCopyKinds); ++i)
    if (kind == kCopyKinds[i]) k.copy_kind = static_cast<int64_t>(i);
  size_t open = name.find('('), arrow = name.find(" -> "), close = name.rfind(')');
  if (open != std::string_view::npos && arrow != std::string_view::npos && close != std::string_view::npos &&
      open < arrow && arrow < close) {
    k.src_kind = lookup_mem_kind(name.substr(open + 1, arrow - open - 1));
    k.dst_kind = lookup_mem_kind(name.substr(arrow + 4, close - arrow - 4));
  }
  return k;
}

std::string memcpy_name(int64_t copy_kind, int64_t src_kind, int64_t dst_kind) {
  std::string s = "Memcpy ";
  s += copy_kind_name(copy_kind);
  s += " (";
  s += mem_kind_name(src_kind);
  s += " -> ";
  s += mem_kind_name(dst_kind);
  s += ')';
  return s;
}

int64_t parse_memset_kind(std::string_view name) {
  size_t open = name.find('('), close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return mem_kind::unknown;
  return lookup_mem_kind(name.substr(open + 1, close - open - 1));
}

std::string memset_name(int64_t mem_kind) {
  return "Memset (" + std::string(mem_kind_name(mem_kind)) + ")";
}

int64_t parse_sync_type(std::string_view name) {
  for (size_t i = 1; i < std::size(kSyncNames); ++i)
    if (name == kSyncNames[i]) return static_cast<int64_t>(i);
  return sync_type::unknown;
}

std::string_view sync_name(int64_t type) {
  return type > sync_type::unknown && type < static_cast<int64_t>(std::size(kSyncNames)) ? kSyncNames[type]
                                                                                       : kSyncNames[sync_type::unknown];
}

int64_t special_range_source(std::string_view name) {
  namespace range_source = schema::range_source;
  if (starts_with(name, "ProfilerStep#")) return range_source::profiler_step;
  if (starts_with(name, "enumerate(DataLoader)#")) return range_source::dataloader;
  if (starts_with(name, "Optimizer.step#") || starts_with(name, "Optimizer.zero_grad#")) return range_source::optimizer;
  return 0;
}

int64_t profiler_step_number(std::string_view name) {
  if (!starts_with(name, "ProfilerStep#")) return INT64_MIN;
  std::string_view digits = name.substr(13);
  int64_t n = 0;
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (r.ec != std::errc() || r.ptr != digits.data() + digits.size()) return INT64_MIN;
  return n;
}

int64_t step_source_code(std::string_view name) {
  return step_source::parse(name).value_or(step_source::profiler_step);
}

std::string_view step_source_name(int64_t code) {
  const std::string_view name = step_source::name(code);
  return name.empty() ? step_source::name(step_source::profiler_step) : name;
}

bool is_backward_name(std::string_view name) {
  return name.find("::") == std::string_view::npos && name.find("Backward") != std::string_view::npos;
}

bool is_gpu_label(std::string_view label) {
  if (!starts_with(label, "GPU ")) return false;
  std::string_view rest = label.substr(4);
  return !rest.empty() && rest.find_first_not_of("0123456789") == std::string_view::npos;
}

void compact_json(std::string_view raw, std::string& out) {
  out.clear();
  out.reserve(raw.size());
  bool in_string = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < raw.size()) out += raw[++i];
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
      out += c;
    }
  }
}

}  // namespace gpuscope::formats
