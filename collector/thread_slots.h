// A fixed table of per-thread rings. An application thread claims a slot on
// its first record (one allocation per slot, ever) and retires it at exit;
// the writer thread drains every slot and frees retired ones once empty.
#pragma once

#include <atomic>
#include <cstdint>

#include "collector/ring.h"

namespace gpuscope::collector {

inline constexpr int kMaxThreadSlots = 1024;
// 4 MiB holds ~50k op records: at 100 ms ticks plus the half-full wake-up below,
// a thread can emit several hundred thousand records per second without drops.
inline constexpr uint64_t kThreadRingBytes = 4 << 20;

enum SlotState : int { kSlotFree = 0, kSlotActive = 1, kSlotRetired = 2 };

struct ThreadSlot {
  std::atomic<int> state{kSlotFree};
  std::atomic<uint32_t> generation{0};
  uint32_t tid = 0;
  std::atomic<uint64_t> dropped{0};
  std::atomic<bool> wake_pending{false};  // one early wake-up per drain
  Ring ring;
};

// Called (once per drain) when a ring passes half full, to wake the writer early.
void set_wake_hook(void (*hook)());

ThreadSlot* thread_slots();

// The calling thread's slot, claimed on first use; nullptr when none is left.
ThreadSlot* current_slot();

// Reserves space for a record in the calling thread's ring; nullptr (and a
// counted drop) when the ring is full or no slot is left.
uint8_t* reserve_record(RecordType type, uint32_t size);
void commit_record();

// Records dropped because no slot was free.
uint64_t slotless_drops();

}  // namespace gpuscope::collector
