// CUPTI's activity buffers (cupti_buffers.h): a pool of 64 x 4 MB behind
// lock-free stacks, handed to CUPTI and back to the writer in completion order.
#include "collector/cupti_buffers.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "collector/cupti_source.h"

namespace gpuscope::collector::cupti_source {
namespace buffers {
namespace {

constexpr size_t kBufferBytes = 4u << 20;  // Kineto's choice; CUPTI advises 1-10 MB
constexpr int kBuffers = 64;               // caps host memory at 256 MB

struct Buffer {
  uint8_t* data = nullptr;
  std::atomic<size_t> valid{0};
  std::atomic<int> next{-1};
  // Set at completion: which CUPTI session (g_session) filled it, and in
  // which order buffers completed, so they are decoded in that order.
  std::atomic<uint32_t> session{0};
  std::atomic<uint64_t> seq{0};
};

// Lock-free stacks of buffer indices with an ABA tag in the upper 32 bits.
class IndexStack {
 public:
  void push(Buffer* pool, int index) {
    uint64_t old = head_.load(std::memory_order_acquire);
    for (;;) {
      pool[index].next.store(static_cast<int>(old & 0xffffffffu) - 1, std::memory_order_relaxed);
      uint64_t desired = ((old >> 32) + 1) << 32 | static_cast<uint32_t>(index + 1);
      if (head_.compare_exchange_weak(old, desired, std::memory_order_acq_rel)) return;
    }
  }
  int pop(Buffer* pool) {
    uint64_t old = head_.load(std::memory_order_acquire);
    for (;;) {
      int index = static_cast<int>(old & 0xffffffffu) - 1;
      if (index < 0) return -1;
      int next = pool[index].next.load(std::memory_order_relaxed);
      uint64_t desired = ((old >> 32) + 1) << 32 | static_cast<uint32_t>(next + 1);
      if (head_.compare_exchange_weak(old, desired, std::memory_order_acq_rel)) return index;
    }
  }

 private:
  std::atomic<uint64_t> head_{0};
};

Buffer g_pool[kBuffers];
IndexStack g_free, g_done;
std::atomic<uint64_t> g_pool_exhausted{0};
std::atomic<uint64_t> g_buffers_used{0};
std::atomic<uint64_t> g_dropped{0};
// CUPTI sessions: one more after each cuptiFinalize. CUPTI numbers correlation
// ids from the start again in a new session; the decoder keeps them unique.
std::atomic<uint32_t> g_session{0};
std::atomic<uint64_t> g_completed{0};

int index_of(uint8_t* data) {
  for (int i = 0; i < kBuffers; ++i)
    if (g_pool[i].data == data) return i;
  return -1;
}

}  // namespace

void allocate() {
  for (int i = 0; i < kBuffers; ++i) {
    // calloc: zeroed pages, so CUPTI need not clear them (cupti_source.cpp sets the attribute).
    if (!g_pool[i].data) g_pool[i].data = static_cast<uint8_t*>(std::calloc(1, kBufferBytes));
    if (g_pool[i].data) g_free.push(g_pool, i);
  }
}

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  int i = g_free.pop(g_pool);
  if (i < 0) {
    g_pool_exhausted.fetch_add(1, std::memory_order_relaxed);
    *buffer = nullptr;
    *size = 0;
  } else {
    *buffer = g_pool[i].data;
    *size = kBufferBytes;
    g_buffers_used.fetch_add(1, std::memory_order_relaxed);
  }
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid) {
  if (!buffer) return;
  int i = index_of(buffer);
  if (i < 0) return;
  size_t dropped = 0;
  const CuptiApi& cupti = api();
  if (cupti.get_num_dropped && cupti.get_num_dropped(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
    g_dropped.fetch_add(dropped, std::memory_order_relaxed);
  g_pool[i].valid.store(valid, std::memory_order_relaxed);
  g_pool[i].session.store(g_session.load(std::memory_order_relaxed), std::memory_order_relaxed);
  g_pool[i].seq.store(g_completed.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
  g_done.push(g_pool, i);
}

void next_session() { g_session.fetch_add(1, std::memory_order_relaxed); }

}  // namespace buffers

using namespace buffers;

void drain(void (*fn)(uint8_t*, size_t, uint32_t, void*), void* ctx) {
  // The stack hands buffers back newest first: decode them in completion order,
  // so a session's buffers all come before the next session's.
  int done[kBuffers];
  int n = 0;
  while (n < kBuffers) {
    const int i = g_done.pop(g_pool);
    if (i < 0) break;
    done[n++] = i;
  }
  std::sort(done, done + n, [](int a, int b) {
    return g_pool[a].seq.load(std::memory_order_relaxed) < g_pool[b].seq.load(std::memory_order_relaxed);
  });
  for (int k = 0; k < n; ++k) {
    const int i = done[k];
    const size_t valid = g_pool[i].valid.load(std::memory_order_relaxed);
    fn(g_pool[i].data, valid, g_pool[i].session.load(std::memory_order_relaxed), ctx);
    std::memset(g_pool[i].data, 0, std::min(valid, kBufferBytes));
    g_free.push(g_pool, i);
  }
}

uint64_t dropped_records() { return g_dropped.load(std::memory_order_relaxed); }
uint64_t pool_exhausted() { return g_pool_exhausted.load(std::memory_order_relaxed); }
uint64_t buffers_used() { return g_buffers_used.load(std::memory_order_relaxed); }

}  // namespace gpuscope::collector::cupti_source
