#include "op_callbacks.h"

#include <ATen/record_function.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "host.h"
#include "input_format.h"
#include "memory_reporter.h"
#include "range_names.h"
#include "schema/meta_keys.h"

namespace gpuscope::torch_plugin {
namespace {

// Shapes and dtypes of the ops open on a thread, each in its own arena so
// neither has to be moved once the other's length is known.
constexpr uint32_t kShapesArenaBytes = 64 * 1024;
constexpr uint32_t kDtypesArenaBytes = 32 * 1024;
constexpr uint32_t kMaxShapesBytes = 2048;
constexpr uint32_t kMaxDtypesBytes = 1024;
constexpr uint32_t kMinTextBytes = 128;
constexpr int kExternalIdThreadShift = 40;  // 2^40 ops per thread before ids could repeat

// What the op's end needs, taken at its start: name() is an out-of-line call
// into libtorch, and the length was already counted there.
struct OpFrame {
  const at::RecordFunction* fn;
  const char* name;
  uint64_t start;
  uint64_t external_id;   // 0 when the op has none
  uint32_t name_len;
  uint32_t shapes_offset; // in the thread's shapes arena
  uint32_t dtypes_offset; // in the thread's dtypes arena
  uint32_t shapes_len;
  uint32_t dtypes_len;
  bool backward;
};

struct RangeFrame {
  const at::RecordFunction* fn;
  uint64_t start;
  RangeInfo info;
  bool nested_optimizer_step;
};

struct ThreadState {
  std::vector<OpFrame> ops;
  std::vector<RangeFrame> ranges;
  std::unique_ptr<char[]> shapes_arena{new char[kShapesArenaBytes]};
  std::unique_ptr<char[]> dtypes_arena{new char[kDtypesArenaBytes]};
  uint32_t shapes_used = 0;
  uint32_t dtypes_used = 0;
  DtypeNames dtype_names;
  uint64_t external_id_base = 0;
  uint64_t external_id_next = 0;
  uint32_t optimizer_steps_open = 0;
  const at::RecordFunction* fetch = nullptr;  // the DataLoader range that turned RecordFunction off here
  MemoryScope memory;  // the allocator hook, installed for the top-level op
};

std::atomic<uint64_t> g_thread_count{0};
CallbackOptions g_options;
StepTracker* g_tracker = nullptr;
uint64_t g_handle = 0;          // ops: every scope but USER_SCOPE; off while sampling leaves steps untraced
uint64_t g_backward_handle = 0; // backward nodes, for steps from backward passes (on_backward_start)
std::mutex g_ops_switch;        // step boundaries (job threads) and the collector's writer thread
bool g_ops_on = true;           // under g_ops_switch: the callback's state
bool g_ops_wanted = true;       // under g_ops_switch: what the collector's schedule asks for
int g_paused = 0;               // under g_ops_switch: set_ops_paused's mode

// GPUSCOPE_TORCH_OP_STEPS: ops in the first `g_op_steps` steps of every
// `g_op_period` (0: of each traced stretch only); g_op_steps 0: every step.
// A steady-state step repeats the op sequence of the one before, so
// `gpuscope record` gives the other steps' API calls (and kernels) their ops by
// position after the job (store/place_ops.h). All under g_ops_switch.
std::atomic<uint32_t> g_op_steps{0};  // read without the lock by end_op
uint32_t g_op_period = 0;
uint64_t g_steps_in_stretch = 0;
bool g_op_step_window = true;   // the step now running is one of those
uint64_t g_windows = 0;          // windows of recorded steps begun after the run's first
uint64_t g_last_step_hash = 0;   // of the step before, when it was recorded in the same window
bool g_last_step_hashed = false;
// Sum over the step's ops of a hash of name and shapes: ops end on several
// threads (autograd's), and a sum does not care in which order.
std::atomic<uint64_t> g_step_hash{0};

// Whether ops are recorded. on_start reads it first, so the callback can stay
// on and return at once (set_ops_paused(2): torch's own cost of calling it,
// told apart from the plugin's work); start_op reads it again after
// stamping the start, for the ops torch began before the callback went off:
// their start comes after the plugin's own work (shapes) and can fall after
// the stretch the switch ended. Set before torch is told, so such an op sees it
// off and is dropped.
std::atomic<bool> g_ops_recording{true};

// Holds g_ops_switch. Ops are recorded when the schedule wants them and no
// pause is asked for.
void apply_ops_state() {
  const bool recording = g_ops_wanted && g_paused == 0 && g_op_step_window;
  g_ops_recording.store(recording, std::memory_order_seq_cst);
  const bool on = recording || (g_paused == 2 && g_ops_wanted && g_op_step_window);
  if (on == g_ops_on) return;
  g_ops_on = on;
  if (on)
    at::reenableCallback(g_handle);
  else
    at::disableCallback(g_handle);
}

// Holds g_ops_switch; called as a step ends, with `next_in_period` the place
// in its period of the step that starts now (1: the one that ended opened a
// window, so nothing before it in the window to compare with). Ops by position
// need steps that repeat, shapes and all. Two recorded steps in a row of one
// window (the run's first excepted: warm-up) whose ops differ mean the shapes
// change from step to step (variable sequence lengths, say): then ops are
// recorded in every step from here on.
void note_recorded_step(uint64_t next_in_period) {
  const uint64_t hash = g_step_hash.exchange(0, std::memory_order_relaxed);
  if (g_op_steps == 0 || !g_op_step_window || !g_ops_recording.load(std::memory_order_relaxed)) {
    g_last_step_hashed = false;
    return;
  }
  const bool steady_window = g_windows > 0;  // the run's first window is 0
  if (g_last_step_hashed && steady_window && next_in_period != 1 && hash != g_last_step_hash) {
    g_op_steps = 0;
    const char* text =
        "torch ops differ between two steps recorded in a row (shapes change from step to step): ops recorded "
        "in every step from here on, as with GPUSCOPE_TORCH_OP_STEPS=0";
    std::fprintf(stderr, "gpuscope: %s\n", text);
    host()->emit_message(GPUSCOPE_INFO, text);
    host()->set_meta(gpuscope::meta_key::kTorchOpStepsChanged.data(), "0");
  }
  g_last_step_hash = hash;
  g_last_step_hashed = true;
}

void emit_step(uint64_t start, uint64_t end, int64_t number, uint32_t source) {
  const gpuscope_host_api* h = host();
  if (!h || !h->enabled()) return;
  h->emit_step(start, end, number, source);
  // Sampled tracing: the collector decides here whether the next steps are
  // traced and, when that changes, switches the op callback through
  // gpuscope_plugin_set_traced (set_ops_traced).
  {
    // Counted before the schedule can start a stretch, which restarts the count.
    std::lock_guard lock(g_ops_switch);
    memory_reporter_step_ended();
    if (g_backward_handle && !g_tracker->steps_from_backward_passes()) {
      at::disableCallback(g_backward_handle);
      g_backward_handle = 0;
    }
    if (g_options.ops && g_handle) {
      ++g_steps_in_stretch;
      const uint64_t in_period = g_op_period ? g_steps_in_stretch % g_op_period : g_steps_in_stretch;
      note_recorded_step(in_period);
      g_op_step_window = g_op_steps == 0 || in_period < g_op_steps;
      if (g_op_step_window && in_period == 0) ++g_windows;
      apply_ops_state();
    }
  }
  h->step_boundary(end);
}

// Thread states live on the heap behind a trivially destructible pointer; a
// thread_local reaper frees them at thread exit, after which callbacks on
// that thread (from other libraries' thread-exit code) do nothing.
thread_local ThreadState* t_state = nullptr;
thread_local bool t_reaped = false;
struct Reaper {
  ~Reaper() {
    delete t_state;
    t_state = nullptr;
    t_reaped = true;
  }
  void arm() {}
};
thread_local Reaper t_reaper;

ThreadState* state() {
  if (t_state || t_reaped) return t_state;
  t_state = new ThreadState;
  t_state->ops.reserve(64);
  t_state->ranges.reserve(16);
  t_state->external_id_base = (g_thread_count.fetch_add(1) + 1) << kExternalIdThreadShift;
  t_reaper.arm();
  return t_state;
}

// torch.profiler stepping in the same job while gpuscope traces CUDA: CUPTI
// serves one subscriber per process, so its trace gets no GPU activity, and the
// caching allocator reports memory to it instead of to us. Said once, on stderr
// and in the database, so an empty profiler trace is not a mystery.
void note_torch_profiler() {
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  const char* text =
      "torch.profiler is stepping in this job: while gpuscope records, its trace gets no CUDA kernels (CUPTI "
      "serves one profiler per process) and gpuscope gets no allocator memory reports for the steps it profiles; "
      "gpuscope's kernels, API calls and ops are complete";
  std::fprintf(stderr, "gpuscope: %s\n", text);
  host()->emit_message(GPUSCOPE_WARNING, text);
}

// Of the name's bytes, not its address: autograd nodes' names live in the node.
uint64_t op_hash(const gpuscope_op& op) {
  const std::hash<std::string_view> h;
  return h({op.name, op.name_len}) * 0x9e3779b97f4a7c15ull ^ h({op.shapes, op.shapes_len});
}

void start_range(ThreadState& ts, const at::RecordFunction& fn, const char* name, uint64_t now) {
  RangeFrame frame{&fn, now, classify_range(name), false};
  if (frame.info.kind == RangeKind::kProfilerStep && g_options.external_ids) note_torch_profiler();
  if (frame.info.kind == RangeKind::kOptimizerStep) frame.nested_optimizer_step = ts.optimizer_steps_open++ > 0;
  // A main-process DataLoader fetch runs the Dataset's per-sample torch ops,
  // thousands a step, each paying torch's callback machinery and ours. Off on
  // this thread until the fetch's range ends (torch still ends a RecordFunction
  // it began with callbacks), so the fetch runs at its untraced speed.
  if (frame.info.kind == RangeKind::kDataLoader && !g_options.dataloader_ops && !ts.fetch &&
      at::isRecordFunctionEnabled()) {
    at::enableRecordFunction(false);
    ts.fetch = &fn;
  }
  ts.ranges.push_back(frame);
  g_tracker->note_activity(now);
}

void end_range(ThreadState& ts, const at::RecordFunction& fn, uint64_t end) {
  // Python's record_function opens and closes ranges from inside helper ops,
  // so ranges are kept apart from ops and matched by their RecordFunction.
  for (size_t i = ts.ranges.size(); i-- > 0;) {
    if (ts.ranges[i].fn != &fn) continue;
    if (ts.fetch == &fn) {
      at::enableRecordFunction(true);
      ts.fetch = nullptr;
    }
    RangeFrame frame = ts.ranges[i];
    ts.ranges.erase(ts.ranges.begin() + static_cast<std::ptrdiff_t>(i));
    if (frame.info.kind == RangeKind::kOptimizerStep && ts.optimizer_steps_open) --ts.optimizer_steps_open;
    const char* name = fn.name();
    host()->emit_range(frame.start, end, range_source(frame.info.kind), static_cast<uint32_t>(i), name,
                       static_cast<uint32_t>(std::strlen(name)));
    g_tracker->on_range_end(classify_range(name), frame.start, end, frame.nested_optimizer_step);
    return;
  }
}

void start_op(ThreadState& ts, const at::RecordFunction& fn, const char* name, at::RecordScope scope) {
  const gpuscope_host_api* h = host();
  OpFrame frame{};
  frame.fn = &fn;
  frame.name = name;
  frame.name_len = static_cast<uint32_t>(std::strlen(name));
  frame.backward = scope == at::RecordScope::BACKWARD_FUNCTION || (!ts.ops.empty() && ts.ops.back().backward) ||
                   is_engine_backward(name);
  if (ts.ops.empty()) memory_reporter_enter(ts.memory);
  frame.shapes_offset = ts.shapes_used;
  frame.dtypes_offset = ts.dtypes_used;
  uint32_t shapes_room = kShapesArenaBytes - ts.shapes_used;
  uint32_t dtypes_room = kDtypesArenaBytes - ts.dtypes_used;
  if (g_options.shapes && fn.needsInputs() && shapes_room >= kMinTextBytes && dtypes_room >= kMinTextBytes) {
    FormattedInputs f = format_inputs(fn.inputs(), ts.shapes_arena.get() + ts.shapes_used,
                                      std::min(kMaxShapesBytes, shapes_room), ts.dtypes_arena.get() + ts.dtypes_used,
                                      std::min(kMaxDtypesBytes, dtypes_room), ts.dtype_names);
    frame.shapes_len = f.shapes_len;
    frame.dtypes_len = f.dtypes_len;
    ts.shapes_used += f.shapes_len;
    ts.dtypes_used += f.dtypes_len;
  }
  if (g_options.external_ids) {
    frame.external_id = ts.external_id_base | (++ts.external_id_next & ((uint64_t{1} << kExternalIdThreadShift) - 1));
    if (g_options.push_external_ids) h->push_external_id(frame.external_id);
  }
  frame.start = h->now_ns();
  if (!g_ops_recording.load(std::memory_order_relaxed)) {
    // Switched off while this op started: it would begin after its stretch. Undo, in reverse.
    if (frame.external_id && g_options.push_external_ids) h->pop_external_id();
    ts.shapes_used = frame.shapes_offset;
    ts.dtypes_used = frame.dtypes_offset;
    if (ts.ops.empty()) memory_reporter_exit(ts.memory);
    return;
  }
  if (ts.ops.empty()) g_tracker->note_activity(frame.start);
  ts.ops.push_back(frame);
}

void end_op(ThreadState& ts, const at::RecordFunction& fn, uint64_t end) {
  size_t i = ts.ops.size();
  while (i > 0 && ts.ops[i - 1].fn != &fn) --i;
  if (i == 0) return;  // started before the plugin loaded, or on another thread
  const OpFrame& frame = ts.ops[i - 1];
  const gpuscope_host_api* h = host();
  if (frame.external_id && g_options.push_external_ids) h->pop_external_id();
  at::RecordScope scope = fn.scope();
  gpuscope_op op{};
  op.start_ns = frame.start;
  op.end_ns = end;
  op.seq_nr = fn.seqNr();
  op.external_id = frame.external_id;
  op.depth = static_cast<uint32_t>(i - 1);
  op.scope = static_cast<uint16_t>(scope);
  op.backward = frame.backward ? 1 : 0;
  op.name = frame.name;
  op.name_len = frame.name_len;
  if (frame.shapes_len) {
    op.shapes = ts.shapes_arena.get() + frame.shapes_offset;
    op.shapes_len = frame.shapes_len;
    op.dtypes = ts.dtypes_arena.get() + frame.dtypes_offset;
    op.dtypes_len = frame.dtypes_len;
  }
  h->emit_op(&op);
  if (g_op_steps.load(std::memory_order_relaxed)) g_step_hash.fetch_add(op_hash(op), std::memory_order_relaxed);
  // Frames above this one never ended (an op left by an exception torch
  // swallowed): drop them with it, and their correlation ids too.
  for (size_t j = i; j < ts.ops.size(); ++j)
    if (ts.ops[j].external_id && g_options.push_external_ids) h->pop_external_id();
  ts.shapes_used = frame.shapes_offset;
  ts.dtypes_used = frame.dtypes_offset;
  ts.ops.resize(i - 1);
  if (ts.ops.empty()) memory_reporter_exit(ts.memory);
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (!g_ops_recording.load(std::memory_order_relaxed) && fn.scope() != at::RecordScope::USER_SCOPE) return nullptr;
  const gpuscope_host_api* h = host();
  if (!h->enabled()) return nullptr;  // forked DataLoader workers, or after exit
  try {
    ThreadState* ts = state();
    if (!ts) return nullptr;
    at::RecordScope scope = fn.scope();
    const char* name = fn.name();
    if (!name) return nullptr;
    if (scope == at::RecordScope::USER_SCOPE) {
      start_range(*ts, fn, name, h->now_ns());
    } else if (g_options.ops && !is_record_function_plumbing(name)) {
      start_op(*ts, fn, name, scope);
    }
  } catch (...) {
    // Never let an exception reach torch: it would log it on the job's stderr.
  }
  return nullptr;
}

// Backward nodes, for steps from backward passes (step_tracker.h, rule 3): a
// callback of their own, on whether the job is traced or not. Tied to the op
// callback, the passes went unseen while it was off (record's control
// stretch, sampling's untraced stretches): no step ended there, so the control
// stretch never did either and the job ran untraced to its end. Torch calls it
// for backward nodes only, a few per layer and step; off for good once an
// optimizer or profiler marker says where steps are (emit_step).
std::unique_ptr<at::ObserverContext> on_backward_start(const at::RecordFunction& fn) {
  if (!g_tracker->steps_from_backward_passes()) return nullptr;
  const gpuscope_host_api* h = host();
  if (!h->enabled()) return nullptr;
  g_tracker->on_backward_op_start(fn.seqNr(), h->now_ns());
  return nullptr;
}

void on_backward_end(const at::RecordFunction&, at::ObserverContext*) {
  if (!g_tracker->steps_from_backward_passes()) return;
  const gpuscope_host_api* h = host();
  if (!h->enabled()) return;
  g_tracker->on_backward_op_end(h->now_ns());
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  const gpuscope_host_api* h = host();
  if (!h->enabled()) return;
  try {
    ThreadState* ts = t_state;
    if (!ts) return;
    if (fn.scope() == at::RecordScope::USER_SCOPE) {
      if (!ts->ranges.empty()) end_range(*ts, fn, h->now_ns());
    } else if (!ts->ops.empty()) {
      end_op(*ts, fn, h->now_ns());
    }
  } catch (...) {
  }
}

}  // namespace

void set_ops_traced(bool on) {
  if (!g_options.ops || !g_handle) return;
  std::lock_guard lock(g_ops_switch);
  if (on && !g_ops_wanted) {
    memory_reporter_stretch_started();
    g_steps_in_stretch = 0;
    g_op_step_window = true;
    ++g_windows;
  }
  g_ops_wanted = on;
  apply_ops_state();
}

void set_ops_paused(int mode) {
  if (!g_options.ops || !g_handle || mode < 0 || mode > 2) return;
  std::lock_guard lock(g_ops_switch);
  if (mode == 0 && g_paused != 0 && g_ops_wanted) memory_reporter_stretch_started();
  g_paused = mode;
  apply_ops_state();
}

uint64_t registered_callback_handle() { return g_handle; }

StepTracker& step_tracker() {
  static StepTracker tracker(emit_step);
  return tracker;
}

bool register_callbacks(const CallbackOptions& options, std::string& why) {
  g_options = options;
  g_op_steps = options.op_steps;
  g_op_period = options.op_period;
  g_tracker = &step_tracker();
  try {
    // Dtype tags, build features and the mobile interpreter are not ops of
    // the training job; everything else is.
    // Two callbacks, so sampled tracing can switch ops off and keep the
    // step markers. torch files callbacks by scope: an op never calls the
    // markers' one, nor a range the ops' one.
    // No ops wanted (GPUSCOPE_TORCH_OPS=0): no op callback at all. Registered
    // and doing nothing it still made torch call it for every op (+9 % a step
    // on the CPU's launch-bound loop, bench/overhead.py).
    at::addGlobalCallback(
        at::RecordFunctionCallback(&on_start, &on_end).scopes({at::RecordScope::USER_SCOPE}));
    if (!options.ops) return true;
    g_handle = at::addGlobalCallback(at::RecordFunctionCallback(&on_start, &on_end)
                              .needsInputs(options.shapes)
                              .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                                       at::RecordScope::TORCHSCRIPT_FUNCTION, at::RecordScope::CUSTOM_CLASS,
                                       at::RecordScope::STATIC_RUNTIME_OP, at::RecordScope::STATIC_RUNTIME_MODEL}));
    std::lock_guard lock(g_ops_switch);
    g_backward_handle = at::addGlobalCallback(
        at::RecordFunctionCallback(&on_backward_start, &on_backward_end).scopes({at::RecordScope::BACKWARD_FUNCTION}));
  } catch (const std::exception& e) {
    why = std::string("at::addGlobalCallback failed: ") + e.what();
    return false;
  }
  return true;
}

}  // namespace gpuscope::torch_plugin
