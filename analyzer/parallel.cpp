#include "analyzer/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace gpuscope::analyzer {

void run_tasks(const std::vector<std::function<void()>>& tasks) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < tasks.size();) {
      try {
        tasks[i]();
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        next = tasks.size();
      }
    }
  };
  const size_t n = std::min<size_t>(tasks.size(), std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace gpuscope::analyzer
