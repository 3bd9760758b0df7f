/* The C ABI between the gpuscope collector and its in-process plugins.
 *
 * A plugin is a shared library exporting gpuscope_plugin_init (and optionally
 * gpuscope_plugin_shutdown and gpuscope_plugin_set_traced). The collector loads it when the library it
 * extends is in the process and passes a host table. Every host function is
 * safe to call from any application thread: it copies into that thread's ring
 * buffer, never blocks, and drops (counting the drop) when the ring is full.
 * Nothing here may throw; plugins must not let exceptions cross this ABI.
 *
 * Versioning: GPUSCOPE_PLUGIN_ABI_VERSION changes when a function's meaning
 * changes; new functions are appended and `size` tells the plugin which exist.
 */
#ifndef GPUSCOPE_PLUGIN_H
#define GPUSCOPE_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUSCOPE_PLUGIN_ABI_VERSION 1

/* Values of the schema's enums (docs/schema.md); collector/cpu_decode.cpp
 * static_asserts each against trace_formats/schema/enums.h. */
enum gpuscope_range_source {
  GPUSCOPE_RANGE_TORCH_USER = 2,   /* record_function / user annotations */
  GPUSCOPE_RANGE_DATALOADER = 3,   /* enumerate(DataLoader)#...__next__ */
  GPUSCOPE_RANGE_OPTIMIZER = 4,    /* Optimizer.step#..., Optimizer.zero_grad#... */
  GPUSCOPE_RANGE_PROFILER_STEP = 5,
  GPUSCOPE_RANGE_TORCH_OTHER = 6
};
enum gpuscope_step_source { GPUSCOPE_STEP_PROFILER_STEP = 1, GPUSCOPE_STEP_OPTIMIZER = 2 };
enum gpuscope_memory_op { GPUSCOPE_MEMORY_ALLOC = 1, GPUSCOPE_MEMORY_FREE = 2 };
enum gpuscope_severity { GPUSCOPE_INFO = 1, GPUSCOPE_WARNING = 2, GPUSCOPE_ERROR = 3 };

typedef struct gpuscope_op {
  uint64_t start_ns, end_ns; /* gpuscope_host_api.now_ns() clock */
  int64_t seq_nr;            /* -1: none */
  uint64_t external_id;      /* 0: none; the id pushed to CUPTI while the op ran */
  uint32_t depth;            /* nesting among ops on this thread, 0 = top */
  uint16_t scope;            /* at::RecordScope value */
  uint8_t backward;          /* 1 for autograd backward functions */
  const char* name;
  uint32_t name_len;
  const char* shapes; /* JSON, e.g. [[32,128],[128]]; may be NULL */
  uint32_t shapes_len;
  const char* dtypes; /* JSON, e.g. ["float","float"]; may be NULL */
  uint32_t dtypes_len;
} gpuscope_op;

typedef struct gpuscope_host_api {
  uint32_t abi_version; /* GPUSCOPE_PLUGIN_ABI_VERSION of the collector */
  uint32_t size;        /* sizeof(gpuscope_host_api) of the collector */

  /* Recording is on: one relaxed atomic load. Check before doing work. */
  int (*enabled)(void);
  /* The recording clock (CLOCK_MONOTONIC ns), the one CUPTI is given. */
  uint64_t (*now_ns)(void);
  /* Which sources the user asked for: "cuda", "nvtx", "memory", "torch", "nvml". */
  int (*trace_enabled)(const char* source);

  void (*emit_op)(const gpuscope_op* op);
  void (*emit_range)(uint64_t start_ns, uint64_t end_ns, uint32_t source, uint32_t depth,
                     const char* name, uint32_t name_len);
  void (*emit_step)(uint64_t start_ns, uint64_t end_ns, int64_t number, uint32_t source);
  void (*emit_memory)(uint64_t ts_ns, int32_t device, uint32_t op, uint64_t address, int64_t bytes,
                      int64_t total_allocated, int64_t total_reserved);
  void (*emit_counter)(uint64_t ts_ns, int32_t device, const char* name, double value);
  void (*emit_message)(uint32_t severity, const char* text);
  void (*set_meta)(const char* key, const char* value);

  /* CUPTI external correlation: GPU work launched between push and pop is
   * linked to `id` (op.external_id). No-ops when CUPTI is not recording. */
  void (*push_external_id)(uint64_t id);
  void (*pop_external_id)(void);

  /* Sampled tracing (`gpuscope record --sample`): call after each step ends,
   * on the thread that ended it, with the step's end time (a traced stretch
   * starts or stops exactly there). The collector switches GPU tracing on or off
   * there, so steps are traced whole; returns 1 when what follows is traced
   * (record ops), 0 when not (record only steps and ranges). Always 1 without
   * sampling. Appended after ABI 1's first release: check `size`. */
  int (*step_boundary)(uint64_t step_end_ns);
} gpuscope_host_api;

/* Exported by the plugin. Returns 0 when it is active, non-zero (having said
 * why through emit_message) when it declined, e.g. a torch version mismatch. */
typedef int (*gpuscope_plugin_init_fn)(const gpuscope_host_api* host);
typedef void (*gpuscope_plugin_shutdown_fn)(void);
/* Optional export gpuscope_plugin_set_traced: the collector calls it (from any
 * thread) whenever sampled tracing switches, and once after init with the
 * current state; 0 means record only steps and ranges until called with 1. */
typedef void (*gpuscope_plugin_set_traced_fn)(int traced);
/* Optional export gpuscope_plugin_pause_ops (the torch plugin): pauses op
 * recording on top of the collector's schedule, from any thread: 0 records,
 * 1 pauses with the op callback off, 2 pauses with it on and returning at once.
 * Not called by the collector; benchmarks call it (bench/torch_plugin/ab_shim.py). */
typedef void (*gpuscope_plugin_pause_ops_fn)(int mode);
/* Optional export gpuscope_plugin_built_for: the version of the library the
 * plugin extends that it was built against (torch: TORCH_VERSION), which
 * `gpuscope doctor` compares with the one the user's python runs. */
typedef const char* (*gpuscope_plugin_built_for_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUSCOPE_PLUGIN_H */
