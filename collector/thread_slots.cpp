#include "collector/thread_slots.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

namespace gpuscope::collector {
namespace {

ThreadSlot g_slots[kMaxThreadSlots];
std::atomic<uint64_t> g_slotless_drops{0};
std::atomic<void (*)()> g_wake_hook{nullptr};

// The hot path reads one trivially destructible pointer. A thread_local with a
// destructor goes through a wrapper that checks its guard first (two
// __tls_get_addr calls per access in a -fPIC library); initial-exec makes the
// pointer a fixed offset from %fs, with no call at all. The collector is
// preloaded, or dlopen'ed by CUDA early, and these 16 bytes fit glibc's
// static TLS surplus.
#define GPUSCOPE_TLS_IE __attribute__((tls_model("initial-exec")))
GPUSCOPE_TLS_IE thread_local ThreadSlot* t_slot = nullptr;
GPUSCOPE_TLS_IE thread_local bool t_failed = false;

// Touched once per claim, to have the slot retired at thread exit.
struct SlotRetirer {
  ~SlotRetirer() {
    // Records emitted later on this thread (atexit handlers) claim a fresh slot
    // instead of writing into one the writer may already have recycled.
    if (t_slot) t_slot->state.store(kSlotRetired, std::memory_order_release);
    t_slot = nullptr;
    t_failed = false;
  }
  void arm() {}
};
thread_local SlotRetirer t_retirer;

ThreadSlot* claim_slot() {
  for (ThreadSlot& s : g_slots) {
    int expected = kSlotFree;
    if (!s.state.compare_exchange_strong(expected, kSlotActive, std::memory_order_acq_rel)) continue;
    if (!s.ring.ready()) {
      auto* mem = static_cast<uint8_t*>(std::malloc(kThreadRingBytes));
      if (!mem) {
        s.state.store(kSlotFree, std::memory_order_release);
        return nullptr;
      }
      s.ring.init(mem, kThreadRingBytes);
    }
    s.tid = static_cast<uint32_t>(syscall(SYS_gettid));
    s.dropped.store(0, std::memory_order_relaxed);
    s.generation.fetch_add(1, std::memory_order_release);
    return &s;
  }
  return nullptr;
}

}  // namespace

ThreadSlot* thread_slots() { return g_slots; }

namespace {
__attribute__((noinline)) ThreadSlot* first_slot() {
  if (t_failed) return nullptr;
  t_retirer.arm();
  t_slot = claim_slot();
  t_failed = t_slot == nullptr;
  return t_slot;
}
}  // namespace

ThreadSlot* current_slot() {
  if (ThreadSlot* s = t_slot) [[likely]]
    return s;
  return first_slot();
}

uint8_t* reserve_record(RecordType type, uint32_t size) {
  ThreadSlot* slot = current_slot();
  if (!slot) {
    g_slotless_drops.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  uint8_t* p = slot->ring.reserve(size);
  if (!p) {
    slot->dropped.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  auto* h = reinterpret_cast<RecordHeader*>(p);
  h->type = type;
  h->reserved = 0;
  h->size = size;
  return p;
}

void commit_record() {
  ThreadSlot* slot = t_slot;
  slot->ring.commit();
  if (slot->ring.over_half_full() && !slot->wake_pending.exchange(true, std::memory_order_relaxed))
    if (auto hook = g_wake_hook.load(std::memory_order_relaxed)) hook();
}

void set_wake_hook(void (*hook)()) { g_wake_hook.store(hook); }

uint64_t slotless_drops() { return g_slotless_drops.load(std::memory_order_relaxed); }

}  // namespace gpuscope::collector
