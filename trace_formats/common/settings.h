// Every GPUSCOPE_* environment variable, in one typed table (CONVENTIONS.md
// item 13): its name, its type (which is its parser), the default value the
// code uses, what `record` sets it to, and its meaning. The collector, the CLI,
// the analyzer and the torch plugin read them only through here, typed with
// read<Id>(); header-only and self-contained because the plugin is built on
// its own, against libtorch, with this one file of trace_formats/.
// `gpuscope record --help-env` prints the table, docs/settings.md holds its
// rows (doc_row), and tests/trace_formats/common/settings_test.cpp fails on a
// GPUSCOPE_ variable read anywhere else or a row that differs. Benchmark and
// test switches of bench/ and tests/ (GPUSCOPE_CALIBRATE, GPUSCOPE_KEEP_TMP,
// ...) stay there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuscope::settings {

// ---------------------------------------------------------------- the types
// Each type is a parser: Value, parse (false: malformed, `out` may be left
// half-set), format (the text parse reads back; "" for a value that has no
// spelling, such as "unset"), kEmptyIsUnset (an empty value reads as unset)
// and kWarns (a malformed value is reported; otherwise it is silently the
// default). `out` comes in holding the default, so a partial value keeps the rest.

inline bool parse_decimal(const char* text, uint64_t& out) {  // digits only, at most 12
  const size_t n = std::strlen(text);
  if (n == 0 || n > 12 || std::strspn(text, "0123456789") != n) return false;
  out = std::strtoull(text, nullptr, 10);
  return true;
}

// Any text but the empty one.
struct Text {
  using Value = std::string;
  static constexpr const char* kName = "text";
  static constexpr bool kEmptyIsUnset = true, kWarns = false;
  static bool parse(const char* text, Value& out) {
    if (!*text) return false;
    out = text;
    return true;
  }
  static std::string format(const Value& v) { return v; }
};
// A file or folder; unset ("") means searched where the entry says.
struct Path : Text {
  static constexpr const char* kName = "path";
};

// "0" off, "1" on; anything else (empty too) is the default.
struct Switch {
  using Value = bool;
  static constexpr const char* kName = "0 or 1";
  static constexpr bool kEmptyIsUnset = true, kWarns = false;
  static bool parse(const char* text, Value& out) {
    if (std::strcmp(text, "0") != 0 && std::strcmp(text, "1") != 0) return false;
    out = *text == '1';
    return true;
  }
  static std::string format(Value v) { return v ? "1" : "0"; }
};
// "0" off, any other value on; empty is the default.
struct Flag {
  using Value = bool;
  static constexpr const char* kName = "0 or any";
  static constexpr bool kEmptyIsUnset = true, kWarns = false;
  static bool parse(const char* text, Value& out) {
    out = std::strcmp(text, "0") != 0;
    return true;
  }
  static std::string format(Value v) { return v ? "1" : "0"; }
};
// Set to anything (empty and "0" too): on; unset: off.
struct Presence {
  using Value = bool;
  static constexpr const char* kName = "set or unset";
  static constexpr bool kEmptyIsUnset = false, kWarns = false;
  static bool parse(const char*, Value& out) {
    out = true;
    return true;
  }
  static std::string format(Value v) { return v ? "1" : ""; }
};
// Unset: decided by the reader (nullopt); "0": off; any other value, empty too: on.
struct AutoSwitch {
  using Value = std::optional<bool>;
  static constexpr const char* kName = "0 or any";
  static constexpr bool kEmptyIsUnset = false, kWarns = false;
  static bool parse(const char* text, Value& out) {
    out = std::strcmp(text, "0") != 0;
    return true;
  }
  static std::string format(const Value& v) { return v ? (*v ? "1" : "0") : ""; }
};

// An unsigned decimal read as strtoull does: what follows the digits is
// ignored, no digits read as 0 (empty too). Never malformed.
struct Number {
  using Value = uint64_t;
  static constexpr const char* kName = "integer";
  static constexpr bool kEmptyIsUnset = false, kWarns = false;
  static bool parse(const char* text, Value& out) {
    out = std::strtoull(text, nullptr, 10);
    return true;
  }
  static std::string format(Value v) { return std::to_string(v); }
};
// A step count: decimal digits only, below 1000000; else the default.
struct StepCount {
  using Value = uint32_t;
  static constexpr const char* kName = "count";
  static constexpr bool kEmptyIsUnset = true, kWarns = false;
  static bool parse(const char* text, Value& out) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(text, &end, 10);
    if (end == text || *end != 0 || n >= 1000000) return false;
    out = static_cast<uint32_t>(n);
    return true;
  }
  static std::string format(Value v) { return std::to_string(v); }
};

// Trace sources, comma-separated; names it does not know are skipped, empty: none.
struct Sources {
  struct Value {
    bool cuda = true, nvtx = true, torch = true, memory = false, nvml = false, overhead = false;
    bool operator==(const Value&) const = default;
    // A source by its name in the list ("torch" for the plugin of that source).
    bool has(std::string_view name) const {
      return name == "cuda" ? cuda : name == "nvtx" ? nvtx : name == "torch" ? torch : name == "memory" ? memory
             : name == "nvml" ? nvml : name == "overhead" && overhead;
    }
  };
  static constexpr const char* kName = "list";
  static constexpr bool kEmptyIsUnset = false, kWarns = false;
  static bool parse(const char* text, Value& out) {
    const std::string list = std::string(",") + text + ",";
    const auto has = [&](const char* s) { return list.find(std::string(",") + s + ",") != std::string::npos; };
    out = {has("cuda"), has("nvtx"), has("torch"), has("memory"), has("nvml"), has("overhead")};
    return true;
  }
  static std::string format(const Value& v) {
    std::string s;
    const std::pair<bool, const char*> items[] = {{v.cuda, "cuda"},   {v.nvtx, "nvtx"}, {v.torch, "torch"},
                                                  {v.memory, "memory"}, {v.nvml, "nvml"}, {v.overhead, "overhead"}};
    for (const auto& [on, name] : items)
      if (on) s += (s.empty() ? "" : ",") + std::string(name);
    return s;
  }
};

// ON,OFF milliseconds, read as strtoull does; ON 0 (or "off") is no duty cycle. Never malformed.
struct MsPair {
  struct Value {
    uint64_t on_ms = 0, off_ms = 0;
    bool operator==(const Value&) const = default;
  };
  static constexpr const char* kName = "ms,ms";
  static constexpr bool kEmptyIsUnset = false, kWarns = false;
  static bool parse(const char* text, Value& out) {
    char* rest = nullptr;
    out = {std::strtoull(text, &rest, 10), 0};
    if (rest && *rest == ',') out.off_ms = std::strtoull(rest + 1, nullptr, 10);
    if (out.on_ms == 0) out.off_ms = 0;
    return true;
  }
  static std::string format(const Value& v) {
    return v.on_ms ? std::to_string(v.on_ms) + "," + std::to_string(v.off_ms) : "off";
  }
};

// "all", "A-B" or "A-" (decimal, A <= B; the grammar of
// trace_formats/common/steps_window.h, which settings_test holds this to),
// or "on-demand". Malformed: reported, every step traced.
struct StepsWindow {
  enum class Mode : uint8_t { kAll, kWindow, kOnDemand };
  struct Value {
    Mode mode = Mode::kAll;
    uint64_t first = 0, last = UINT64_MAX;
    bool operator==(const Value&) const = default;
  };
  static constexpr const char* kName = "steps";
  static constexpr const char* kExpected = "A-B, A- or on-demand (A <= B)";
  static constexpr bool kEmptyIsUnset = false, kWarns = true;
  static bool parse(const char* text, Value& out) {
    if (std::strcmp(text, "all") == 0 || std::strcmp(text, "on-demand") == 0) {
      out = {*text == 'a' ? Mode::kAll : Mode::kOnDemand, 0, UINT64_MAX};
      return true;
    }
    const char* dash = std::strchr(text, '-');
    if (!dash || dash == text) return false;
    uint64_t a = 0, b = UINT64_MAX;
    if (!parse_decimal(std::string(text, dash).c_str(), a)) return false;
    if (dash[1] && !parse_decimal(dash + 1, b)) return false;
    if (b < a) return false;
    out = {Mode::kWindow, a, b};
    return true;
  }
  static std::string format(const Value& v) {
    if (v.mode == Mode::kAll) return "all";
    if (v.mode == Mode::kOnDemand) return "on-demand";
    return std::to_string(v.first) + "-" + (v.last == UINT64_MAX ? "" : std::to_string(v.last));
  }
};

// The control stretch: "W,N[,MS]" (MS keeps the default when left out), or
// "0" (off: N 0). Anything else is silently the default.
struct ControlSteps {
  struct Value {
    uint64_t warmup = 3, steps = 8, min_ms = 200;
    bool operator==(const Value&) const = default;
  };
  static constexpr const char* kName = "W,N[,MS]";
  static constexpr bool kEmptyIsUnset = false, kWarns = false;
  static bool parse(const char* text, Value& out) {
    if (std::strcmp(text, "0") == 0) {
      out.steps = 0;
      return true;
    }
    unsigned long long w = 0, n = 0, ms = out.min_ms;
    if (std::sscanf(text, "%llu,%llu,%llu", &w, &n, &ms) < 2) return false;
    out = {w, n, ms};
    return true;
  }
  static std::string format(const Value& v) {
    return std::to_string(v.warmup) + "," + std::to_string(v.steps) + "," + std::to_string(v.min_ms);
  }
};

// Ops in some steps: "N" or "N/M" (N < M, both at most 1000000; N 0: every
// step), or "auto" (the plugin decides). Malformed: reported, every step.
struct OpSteps {
  struct Value {
    bool automatic = false;
    uint32_t steps = 0, period = 0;  // period 0: of each traced stretch
    bool operator==(const Value&) const = default;
  };
  static constexpr const char* kName = "N[/M] or auto";
  static constexpr const char* kExpected = "N or N/M (N < M), or auto";
  static constexpr bool kEmptyIsUnset = true, kWarns = true;
  static bool parse(const char* text, Value& out) {
    if (std::strcmp(text, "auto") == 0) {
      out = {true, 0, 0};
      return true;
    }
    char* end = nullptr;
    const unsigned long n = std::strtoul(text, &end, 10);
    if (end == text || n > 1000000) return false;
    unsigned long m = 0;
    if (*end == '/') {
      const char* p = end + 1;
      m = std::strtoul(p, &end, 10);
      if (end == p || m <= n || m > 1000000) return false;
    }
    if (*end != 0) return false;
    out = {false, static_cast<uint32_t>(n), n == 0 ? 0 : static_cast<uint32_t>(m)};
    return true;
  }
  static std::string format(const Value& v) {
    if (v.automatic) return "auto";
    return std::to_string(v.steps) + (v.steps && v.period ? "/" + std::to_string(v.period) : "");
  }
};

// "N=V,...": CUPTI activity attributes; items that are not N=V are skipped.
struct Attributes {
  using Value = std::vector<std::pair<uint32_t, uint64_t>>;
  static constexpr const char* kName = "N=V,...";
  static constexpr bool kEmptyIsUnset = false, kWarns = false;
  static bool parse(const char* text, Value& out) {
    out.clear();
    const std::string list = text;
    for (size_t at = 0; at <= list.size();) {
      size_t comma = list.find(',', at);
      if (comma == std::string::npos) comma = list.size();
      unsigned long long n = 0, v = 0;
      if (comma > at && std::sscanf(list.substr(at, comma - at).c_str(), "%llu=%llu", &n, &v) == 2)
        out.emplace_back(static_cast<uint32_t>(n), v);
      at = comma + 1;
    }
    return true;
  }
  static std::string format(const Value& v) {
    std::string s;
    for (const auto& [n, value] : v) s += (s.empty() ? "" : ",") + std::to_string(n) + "=" + std::to_string(value);
    return s;
  }
};

// ---------------------------------------------------------------- the table
// X(id, name, type, default, unset, record, record_full, meaning):
//   default      the typed value the code uses when the variable is unset;
//   unset        where the default has no spelling ("" above): what unset means;
//   record       what `gpuscope record` sets unless the user did (nullptr: nothing);
//   record_full  the same for `record --full` (CONTROL_STEPS: set always);
//   meaning      one line for --help-env and docs/settings.md.
#define GPUSCOPE_SETTINGS(X)                                                                                        \
  X(kOutput, "GPUSCOPE_OUTPUT", Text, ("gpuscope_%p.db"), "", nullptr, nullptr,                                   \
    "recording file; %p pid, %h host, %q{VAR} an environment variable (record -o sets it)")                        \
  X(kTrace, "GPUSCOPE_TRACE", Sources, (Sources::Value{true, true, true, false, false, false}), "", nullptr,     \
    nullptr, "sources, comma-separated, from cuda,nvtx,torch,memory,nvml,overhead (record --trace sets it)")        \
  X(kSampleMs, "GPUSCOPE_SAMPLE_MS", MsPair, (MsPair::Value{0, 0}), "", nullptr, nullptr,                          \
    "ON,OFF: trace ON ms out of every ON+OFF ms (record --sample sets it)")                                        \
  X(kTraceSteps, "GPUSCOPE_TRACE_STEPS", StepsWindow, (StepsWindow::Value{}), "", nullptr, nullptr,               \
    "A-B or A-: trace torch steps A to B only (numbered from 0, as analyze --steps takes them; record --steps); "  \
    "on-demand: dormant until gpuscope trigger asks (record --on-demand)")                                          \
  X(kControlSteps, "GPUSCOPE_CONTROL_STEPS", ControlSteps, (ControlSteps::Value{3, 8, 200}), "", nullptr, "0",     \
    "W,N[,MS]: after W torch steps, once two steps in a row agree within 25 % (at most W+50), leave N steps, "   \
    "at least MS ms, untraced to time the job without gpuscope; 0: off")                                                                               \
  X(kOriginNs, "GPUSCOPE_ORIGIN_NS", Number, (0), "", nullptr, nullptr,                                             \
    "set by record: the recording's clock origin, CLOCK_MONOTONIC ns (0: the file's, or now)")                     \
  X(kWindowStartNs, "GPUSCOPE_WINDOW_START_NS", Number, (0), "", nullptr, nullptr,                                  \
    "set by record --delay: trace from this CLOCK_MONOTONIC ns")                                                   \
  X(kWindowEndNs, "GPUSCOPE_WINDOW_END_NS", Number, (0), "", nullptr, nullptr,                                      \
    "set by record --duration: trace until this CLOCK_MONOTONIC ns")                                               \
  X(kDriverApi, "GPUSCOPE_DRIVER_API", Switch, (true), "", nullptr, nullptr, "0: no CUDA driver API records")      \
  X(kRuntimeApi, "GPUSCOPE_RUNTIME_API", Switch, (true), "", nullptr, nullptr, "0: no CUDA runtime API records")   \
  X(kPeriodicFlush, "GPUSCOPE_PERIODIC_FLUSH", Switch, (true), "", nullptr, nullptr,                                \
    "0: CUPTI hands over only full buffers (no flush every 100 ms)")                                               \
  X(kMinFreeMb, "GPUSCOPE_MIN_FREE_MB", Number, (256), "", nullptr, nullptr,                                        \
    "the recording stops (the job runs on untraced) when its file system has fewer MB free; 0: never")             \
  X(kCuptiFinalize, "GPUSCOPE_CUPTI_FINALIZE", AutoSwitch, (std::nullopt), "1 where tracing switches", nullptr,    \
    nullptr, "0: CUPTI stays initialized while untraced (--sample, --delay, --duration, control stretch); 1: torn down") \
  X(kCupti, "GPUSCOPE_CUPTI", Path, (""), "searched", nullptr, nullptr,                                             \
    "path of libcupti when none is loaded in the process")                                                         \
  X(kCuptiAttributes, "GPUSCOPE_CUPTI_ATTRIBUTES", Attributes, (Attributes::Value{}), "CUPTI's defaults", nullptr, \
    nullptr, "N=V,...: CUpti_ActivityAttribute N (cupti_activity.h) set to V before tracing starts, e.g. 0=33554432") \
  X(kDisable, "GPUSCOPE_DISABLE", Presence, (false), "", nullptr, nullptr,                                          \
    "set (any value): the collector does nothing in this process")                                                 \
  X(kCrashTrace, "GPUSCOPE_CRASH_TRACE", Presence, (false), "", nullptr, nullptr,                                   \
    "set: a backtrace on stderr at SIGSEGV, SIGBUS, SIGABRT")                                                      \
  X(kTorchPlugin, "GPUSCOPE_TORCH_PLUGIN", Path, (""), "the cache's, else next to the collector", nullptr, nullptr, \
    "path of libgpuscope_torch.so (default: the one gpuscope setup torch built for the job's torch)")               \
  X(kCacheDir, "GPUSCOPE_CACHE_DIR", Path, (""), "$XDG_CACHE_HOME/gpuscope, or ~/.cache/gpuscope", nullptr,         \
    nullptr, "per-user cache: gpuscope setup torch builds the torch plugin into torch/VERSION/ there")              \
  X(kTorchOps, "GPUSCOPE_TORCH_OPS", Switch, (true), "", nullptr, nullptr, "0: no ops (ranges and steps stay)")    \
  X(kTorchShapes, "GPUSCOPE_TORCH_SHAPES", Switch, (true), "", nullptr, nullptr, "0: no op input shapes or dtypes") \
  X(kTorchDataLoaderOps, "GPUSCOPE_TORCH_DATALOADER_OPS", Switch, (false), "", nullptr, nullptr,                    \
    "1: ops inside a main-process DataLoader fetch too (by default its range is recorded, its ops are not)")      \
  X(kTorchOpSteps, "GPUSCOPE_TORCH_OP_STEPS", OpSteps, (OpSteps::Value{}), "", "auto", "0",                         \
    "N/M: ops in the first N steps of every M (N: of each traced stretch), the other steps' kernels get their ops " \
    "by position after record's job; auto: 2/50 when the job's torch has CUDA, else 0; 0: ops in every step")      \
  X(kTorchMemory, "GPUSCOPE_TORCH_MEMORY", Switch, (true), "", nullptr, nullptr, "0: no allocator memory")         \
  X(kTorchCpuMemory, "GPUSCOPE_TORCH_CPU_MEMORY", Flag, (false), "", nullptr, nullptr,                              \
    "1: the CPU allocator's memory too")                                                                           \
  X(kTorchMemorySteps, "GPUSCOPE_TORCH_MEMORY_STEPS", StepCount, (2), "", nullptr, "0",                             \
    "allocator memory in the first N steps of each traced stretch; 0: in every traced step")                      \
  X(kTorchExternalIds, "GPUSCOPE_TORCH_EXTERNAL_IDS", Switch, (true), "", "0", "0",                                 \
    "1: ops linked to kernels through CUPTI external correlation (slower) instead of by thread and time")          \
  X(kCollector, "GPUSCOPE_COLLECTOR", Path, (""), "next to gpuscope, or ../lib", nullptr, nullptr,                  \
    "record: path of libgpuscope_collector.so")                                                                    \
  X(kAnalyzeTiming, "GPUSCOPE_ANALYZE_TIMING", Presence, (false), "", nullptr, nullptr,                             \
    "set: analyze prints its phase timings on stderr")                                                             \
  X(kPython, "GPUSCOPE_PYTHON", Text, ("/usr/bin/python3"), "", nullptr, nullptr,                                   \
    "cluster: the Python that runs the Dask driver (needs python3-distributed)")                                  \
  X(kClusterDriver, "GPUSCOPE_CLUSTER_DRIVER", Path, (""), "next to gpuscope, ../share/gpuscope, or the source tree", \
    nullptr, nullptr, "cluster: path of gpuscope_cluster.py, the Dask driver")                                     \
  X(kTry, "GPUSCOPE_TRY", Text, (""), "the job runs as it is", nullptr, nullptr,                                   \
    "set by try in each run: the variant, fixes joined by + (amp+compile), applied by its Python hook; "          \
    "empty: the run as it is (scripts may skip checkpoints when it is set)")                                       \
  X(kTryDir, "GPUSCOPE_TRY_DIR", Path, (""), "no try hook", nullptr, nullptr,                                      \
    "set by try in each run: the folder where the job's try hook writes what it changed and its step times")

enum class Id : int {
#define GPUSCOPE_SETTING_ID(id, name_, type, default_, unset, record, record_full, meaning) id,
  GPUSCOPE_SETTINGS(GPUSCOPE_SETTING_ID)
#undef GPUSCOPE_SETTING_ID
};

// The typed entry of each setting: Entry<Id::kControlSteps>::Type is
// ControlSteps, default_value() {3, 8, 200}.
template <Id>
struct Entry;
#define GPUSCOPE_SETTING_ENTRY(id, name_, type, default_, unset, record, record_full, meaning) \
  template <>                                                                                  \
  struct Entry<Id::id> {                                                                       \
    using Type = type;                                                                         \
    using Value = type::Value;                                                                 \
    static constexpr const char* kName = name_;                                                \
    static Value default_value() { return Value default_; }                                    \
  };
GPUSCOPE_SETTINGS(GPUSCOPE_SETTING_ENTRY)
#undef GPUSCOPE_SETTING_ENTRY

// One row of the table, untyped, for listing it.
struct Setting {
  Id id;
  const char* name;
  const char* type;          // the parser's name
  const char* unset;         // what unset means where the default has no spelling, else ""
  const char* record;        // what record sets unless the user did; nullptr: nothing
  const char* record_full;   // the same for record --full
  const char* meaning;
  std::string (*default_text)();       // the default, spelled as its parser reads it ("" for none)
  bool (*parses)(const char* text);  // whether `text` is a well-formed value
};

template <Id id>
bool parses_as(const char* text) {
  using E = Entry<id>;
  if (E::Type::kEmptyIsUnset && !*text) return false;
  typename E::Value v = E::default_value();
  return E::Type::parse(text, v);
}

template <Id id>
std::string default_text_of() {
  return Entry<id>::Type::format(Entry<id>::default_value());
}

inline constexpr Setting kSettings[] = {
#define GPUSCOPE_SETTING_ROW(id, name_, type, default_, unset, record, record_full, meaning) \
  {Id::id, name_, type::kName, unset, record, record_full, meaning, &default_text_of<Id::id>, &parses_as<Id::id>},
    GPUSCOPE_SETTINGS(GPUSCOPE_SETTING_ROW)
#undef GPUSCOPE_SETTING_ROW
};
inline constexpr size_t kCount = sizeof kSettings / sizeof kSettings[0];

constexpr const Setting& setting(Id id) { return kSettings[static_cast<size_t>(id)]; }
constexpr const char* name(Id id) { return setting(id).name; }

// The default as people read it: its spelling, or "unset" with what that means.
inline std::string shown_default(const Setting& s) {
  const std::string text = s.default_text();
  if (!text.empty()) return text;
  return *s.unset ? std::string("unset: ") + s.unset : std::string("unset");
}
// What record does to it ("" when nothing): "record: auto; record --full: 0".
inline std::string record_note(const Setting& s) {
  std::string note;
  if (s.record) note = std::string("record: ") + s.record;
  if (s.record_full && (!s.record || std::strcmp(s.record, s.record_full) != 0))
    note += (note.empty() ? "" : "; ") + std::string("record --full: ") + s.record_full;
  return note;
}
// Its row in docs/settings.md.
inline std::string doc_row(const Setting& s) {
  const std::string note = record_note(s);
  return std::string("| `") + s.name + "` | " + s.type + " | " + shown_default(s) + " | " +
         (note.empty() ? "—" : note) + " | " + s.meaning + " |";
}

// ---------------------------------------------------------------- reading
// The value, nullptr when unset: the one place a GPUSCOPE_ variable is read.
inline const char* raw(Id id) { return std::getenv(name(id)); }

template <class V>
struct Read {
  V value;
  // For a malformed value of a type that reports them: "NAME=VALUE is not
  // EXPECTED" (the reader adds what it does instead); empty otherwise.
  std::string warning;
};

// The one parser: `text` (nullptr: unset) as setting `id` reads it. Unset,
// empty where that means unset, or malformed: the default.
template <Id id>
Read<typename Entry<id>::Value> parse(const char* text) {
  using E = Entry<id>;
  Read<typename E::Value> r{E::default_value(), {}};
  if (!text || (E::Type::kEmptyIsUnset && !*text)) return r;
  if (E::Type::parse(text, r.value)) return r;
  r.value = E::default_value();
  if constexpr (E::Type::kWarns) r.warning = std::string(E::kName) + "=" + text + " is not " + E::Type::kExpected;
  return r;
}
// Setting `id` from the environment, typed.
template <Id id>
Read<typename Entry<id>::Value> read() {
  return parse<id>(raw(id));
}
template <Id id>
typename Entry<id>::Value value() {
  static_assert(!Entry<id>::Type::kWarns, "read<id>() and report its warning");
  return read<id>().value;
}

// Untyped reads, for callers that only need the text or its presence.
inline bool is_set(Id id) { return raw(id) != nullptr; }
// Set and not empty; nullptr otherwise.
inline const char* text(Id id) {
  const char* v = raw(id);
  return v && *v ? v : nullptr;
}
// Whether the value is exactly `value`.
inline bool equals(Id id, const char* value) {
  const char* v = raw(id);
  return v && std::strcmp(v, value) == 0;
}
// The value read as an unsigned decimal (strtoull), 0 when unset.
inline uint64_t u64(Id id) {
  const char* v = raw(id);
  return v ? std::strtoull(v, nullptr, 10) : 0;
}
// Unset or empty: `fallback`; "0": false; anything else: true.
inline bool flag(Id id, bool fallback) {
  const char* v = text(id);
  return v ? std::strcmp(v, "0") != 0 : fallback;
}

}  // namespace gpuscope::settings
