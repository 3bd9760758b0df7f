// Single-producer single-consumer byte ring. The producer is one application
// thread, the consumer the writer thread. No locks; a full ring drops.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "collector/cpu_records.h"

namespace gpuscope::collector {

class Ring {
 public:
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // `memory` must hold `capacity` bytes, a multiple of 8; the ring does not own
  // it. Only the largest power of two that fits is used: a position is then a
  // mask, where `% capacity` was a 64-bit division on every record.
  void init(uint8_t* memory, uint64_t capacity) {
    while (capacity & (capacity - 1)) capacity &= capacity - 1;
    data_ = memory;
    capacity_ = capacity;
    mask_ = capacity - 1;
    pending_ = 0;
    seen_tail_ = 0;
    head_.store(0, std::memory_order_relaxed);
    tail_.store(0, std::memory_order_relaxed);
  }
  bool ready() const { return data_ != nullptr; }

  // Producer: space for a record of `size` bytes (multiple of 8), or nullptr when full.
  // The consumer's tail is read again only when the copy seen last says the
  // record does not fit: tail_ sits on a line the writer thread dirties.
  uint8_t* reserve(uint32_t size) {
    uint64_t head = head_.load(std::memory_order_relaxed);
    uint64_t pos = head & mask_;
    uint64_t pad = pos + size > capacity_ ? capacity_ - pos : 0;
    if (size > capacity_) return nullptr;
    if (head + pad + size - seen_tail_ > capacity_) {
      seen_tail_ = tail_.load(std::memory_order_acquire);
      if (head + pad + size - seen_tail_ > capacity_) return nullptr;
    }
    if (pad) {
      auto* h = reinterpret_cast<RecordHeader*>(data_ + pos);
      h->type = RecordType::kPadding;
      h->size = static_cast<uint32_t>(pad);
      head += pad;
      head_.store(head, std::memory_order_release);
      pos = 0;
    }
    pending_ = head + size;
    return data_ + pos;
  }
  // Producer: publishes the record last reserved.
  void commit() { head_.store(pending_, std::memory_order_release); }

  // Producer: true when more than half the ring is still undrained. Checks the
  // stale tail first, so the writer's line is read only past half full.
  bool over_half_full() {
    if (pending_ - seen_tail_ <= capacity_ / 2) return false;
    seen_tail_ = tail_.load(std::memory_order_acquire);
    return pending_ - seen_tail_ > capacity_ / 2;
  }

  // Consumer: calls fn(const RecordHeader&) for every published record.
  template <class Fn> uint64_t drain(Fn&& fn) {
    uint64_t tail = tail_.load(std::memory_order_relaxed);
    uint64_t head = head_.load(std::memory_order_acquire);
    uint64_t n = 0;
    while (tail < head) {
      uint64_t pos = tail & mask_;
      const auto* h = reinterpret_cast<const RecordHeader*>(data_ + pos);
      if (h->type != RecordType::kPadding) {
        fn(*h);
        ++n;
      }
      tail += h->size;
    }
    tail_.store(tail, std::memory_order_release);
    return n;
  }

  // Bytes published and not yet drained (producer side estimate).
  uint64_t used() const {
    return head_.load(std::memory_order_relaxed) - tail_.load(std::memory_order_relaxed);
  }
  uint64_t capacity() const { return capacity_; }

  bool empty() const {
    return tail_.load(std::memory_order_acquire) == head_.load(std::memory_order_acquire);
  }

 private:
  uint8_t* data_ = nullptr;
  uint64_t capacity_ = 0;
  uint64_t mask_ = 0;
  uint64_t pending_ = 0;    // producer only
  uint64_t seen_tail_ = 0;  // producer only: tail_ as last read, never ahead of it
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
};

}  // namespace gpuscope::collector
