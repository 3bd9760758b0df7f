// The one way tests and benchmarks write a synthetic recording. It writes
// through the product's store::Writer, so the schema is the product's; it owns
// the file, the transaction, the process, thread and device rows, correlation
// ids and the pairing of an API call with what it caused. A scenario keeps only
// which rows it adds and when: rows are the store's row structs, best written
// with designated initializers, and a pid or tid left 0 is the current one's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace_formats/schema/enums.h"
#include "trace_formats/store/rows.h"
#include "trace_formats/store/writer.h"

namespace gpuscope::test_support {

// The range torch's DataLoader iterator records around each batch.
inline constexpr std::string_view kDataLoaderNext = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

// A training script as the collector sees it: python3 running train.py on `host`, CUPTI working.
store::ProcessRow python_process(int64_t pid, std::string host = "testhost");

class RecordingBuilder {
 public:
  // kReplace removes the file and its -wal/-shm first; kAppend adds to it.
  enum class Open { kReplace, kAppend };

  // Opens the recording (the writer creates the schema) and a transaction.
  explicit RecordingBuilder(const std::string& path, Open open = Open::kReplace);
  // Commits what finish() has not, unless an exception is unwinding.
  ~RecordingBuilder();
  RecordingBuilder(const RecordingBuilder&) = delete;
  RecordingBuilder& operator=(const RecordingBuilder&) = delete;

  // For large generated recordings: no rollback journal, no fsync (a crash
  // leaves a broken file). Call it before adding rows.
  RecordingBuilder& unjournaled();
  // Commits and opens the next transaction (keeps the WAL of a large recording bounded).
  void commit();
  // Commits (once; later calls do nothing); nothing may be added afterwards.
  void finish();
  store::Writer& writer() { return w_; }

  RecordingBuilder& meta(std::string_view key, std::string_view value);
  // Writes the process and its main thread (tid = pid; none when the name is
  // empty) and makes them current.
  RecordingBuilder& process(const store::ProcessRow& p, std::string_view main_thread = "python3");
  // A thread of the current process.
  RecordingBuilder& thread(int64_t tid, std::string_view name);
  RecordingBuilder& device(const store::DeviceRow& d);
  // Rows added from now on belong to this process and thread.
  RecordingBuilder& at(int64_t pid, int64_t tid);

  // One row each, pid (and tid where the table has one) defaulted as above.
  void kernel(store::KernelRow r) { add(r); }
  void memcpy(store::MemcpyRow r) { add(r); }
  void memset(store::MemsetRow r) { add(r); }
  void api(store::ApiCallRow r) { add(r); }
  void sync(store::SyncRow r) { add(r); }
  void op(store::OpRow r) { add(r); }
  void range(store::RangeRow r) { add(r); }
  void memory(store::MemoryEventRow r) { add(r); }
  void counter(store::CounterRow r) { add(r); }
  void graph_launch(store::GraphLaunchRow r) { add(r); }
  void step(int64_t number, int64_t start, int64_t end,
            int64_t source = schema::step_source::optimizer_step);
  // The DataLoader's range on the current thread.
  void dataloader(int64_t start, int64_t end, int64_t depth = 0);
  // Ties a correlation id of the current process to an op's external id.
  void external_correlation(int64_t correlation, int64_t external_id);

  // Correlation ids, from 1 in each recording.
  int64_t next_correlation() { return correlation_++; }
  // An API call and what it caused (GPU work, or the host's wait for the
  // GPU), both under one fresh correlation id, which is returned. A call made
  // inside an op passes the op's external id.
  int64_t launch(store::ApiCallRow call, store::KernelRow work, int64_t external_id = store::kNull);
  int64_t launch(store::ApiCallRow call, store::MemcpyRow work, int64_t external_id = store::kNull);
  int64_t launch(store::ApiCallRow call, store::MemsetRow work, int64_t external_id = store::kNull);
  int64_t launch(store::ApiCallRow call, store::SyncRow wait, int64_t external_id = store::kNull);

 private:
  template <class Row> void add(Row& r) {
    if (r.pid == 0) r.pid = pid_;
    if constexpr (requires { r.tid; })
      if (r.tid == 0) r.tid = tid_;
    w_.add(r);
  }
  template <class Row> int64_t paired(store::ApiCallRow& call, Row& caused, int64_t external_id);

  store::Writer w_;
  int64_t pid_ = 0, tid_ = 0;
  int64_t correlation_ = 1;
  bool finished_ = false;
};

}  // namespace gpuscope::test_support
