// Hot-path emitters used by the NVTX handlers and the plugin host. Each checks
// the enabled flag with one relaxed load, then copies into the thread's ring.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "collector/cpu_records.h"
#include "gpuscope/plugin.h"

namespace gpuscope::collector {

// Set once recording is active in this process; cleared in forked children.
extern std::atomic<bool> g_enabled;

inline bool enabled() { return g_enabled.load(std::memory_order_relaxed); }

inline constexpr uint32_t kMaxTextBytes = 4096;

void emit_nvtx_range(RecordType type, uint64_t ts, uint64_t domain, uint64_t range_id,
                     std::string_view name, bool has_color, uint32_t color, uint32_t category);
void emit_nvtx_end(RecordType type, uint64_t ts, uint64_t domain, uint64_t range_id);
void emit_nvtx_domain(uint64_t domain, std::string_view name);
void emit_op(const OpRecord& fixed, std::string_view name, std::string_view shapes,
             std::string_view dtypes);
// A plugin's op as the host ABI hands it over (NULL texts are empty).
void emit_op(const gpuscope_op& op);
void emit_range(uint64_t start, uint64_t end, uint32_t source, uint32_t depth, std::string_view name);
void emit_step(uint64_t start, uint64_t end, int64_t number, uint32_t source);
void emit_memory(const MemoryRecord& fixed);
void emit_counter(uint64_t ts, int32_t device, std::string_view name, double value);
void emit_message(uint64_t ts, uint32_t severity, std::string_view text);
void emit_meta(std::string_view key, std::string_view value);
void emit_external_correlation(uint64_t correlation, uint64_t external_id);

}  // namespace gpuscope::collector
