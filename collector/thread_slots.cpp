#include "collector/thread_slots.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

namespace gpuscope::collector {
namespace {

ThreadSlot g_slots[kMaxThreadSlots];
std::atomic<uint64_t> g_slotless_drops{0};
std::atomic<void (*)()> g_wake_hook{nullptr};

struct SlotOwner {
  ThreadSlot* slot = nullptr;
  bool failed = false;
  ~SlotOwner() {
    // Records emitted later on this thread (atexit handlers) claim a fresh slot
    // instead of writing into one the writer may already have recycled.
    if (slot) slot->state.store(kSlotRetired, std::memory_order_release);
    slot = nullptr;
    failed = false;
  }
};

thread_local SlotOwner t_owner;

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

ThreadSlot* current_slot() {
  if (t_owner.slot) return t_owner.slot;
  if (t_owner.failed) return nullptr;
  t_owner.slot = claim_slot();
  t_owner.failed = t_owner.slot == nullptr;
  return t_owner.slot;
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
  ThreadSlot* slot = t_owner.slot;
  slot->ring.commit();
  if (slot->ring.used() > slot->ring.capacity() / 2 && !slot->wake_pending.exchange(true, std::memory_order_relaxed))
    if (auto hook = g_wake_hook.load(std::memory_order_relaxed)) hook();
}

void set_wake_hook(void (*hook)()) { g_wake_hook.store(hook); }

uint64_t slotless_drops() { return g_slotless_drops.load(std::memory_order_relaxed); }

}  // namespace gpuscope::collector
