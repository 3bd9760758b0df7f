#include "tests/support/recording_builder.h"

#include <cstdio>
#include <exception>

namespace gpuscope::test_support {
namespace {

const std::string& prepared(const std::string& path, RecordingBuilder::Open open) {
  if (open == RecordingBuilder::Open::kReplace)
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

}  // namespace

store::ProcessRow python_process(int64_t pid, std::string host) {
  store::ProcessRow p;
  p.pid = pid;
  p.host = std::move(host);
  p.exe = "/usr/bin/python3";
  p.cmdline = "python3 train.py";
  p.cupti_status = "ok";
  return p;
}

RecordingBuilder::RecordingBuilder(const std::string& path, Open open) : w_(prepared(path, open)) { w_.begin(); }

RecordingBuilder::~RecordingBuilder() {
  if (!finished_ && std::uncaught_exceptions() == 0) finish();
}

RecordingBuilder& RecordingBuilder::unjournaled() {
  w_.commit();  // SQLite changes the journal mode outside transactions only
  w_.connection().exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
  w_.begin();
  return *this;
}

void RecordingBuilder::commit() {
  w_.commit();
  w_.begin();
}

void RecordingBuilder::finish() {
  if (finished_) return;
  finished_ = true;
  w_.commit();
}

RecordingBuilder& RecordingBuilder::meta(std::string_view key, std::string_view value) {
  w_.set_meta(key, value);
  return *this;
}

RecordingBuilder& RecordingBuilder::process(const store::ProcessRow& p, std::string_view main_thread) {
  w_.put(p);
  at(p.pid, p.pid);
  return main_thread.empty() ? *this : thread(p.pid, main_thread);
}

RecordingBuilder& RecordingBuilder::thread(int64_t tid, std::string_view name) {
  w_.put(store::ThreadRow{pid_, tid, std::string(name)});
  return *this;
}

RecordingBuilder& RecordingBuilder::device(const store::DeviceRow& d) {
  w_.put(d);
  return *this;
}

RecordingBuilder& RecordingBuilder::at(int64_t pid, int64_t tid) {
  pid_ = pid;
  tid_ = tid;
  return *this;
}

void RecordingBuilder::step(int64_t number, int64_t start, int64_t end, int64_t source) {
  w_.add(store::StepRow{pid_, number, start, end, source});
}

void RecordingBuilder::dataloader(int64_t start, int64_t end, int64_t depth) {
  range({.source = schema::range_source::dataloader, .name = kDataLoaderNext, .start = start, .end = end,
         .depth = depth});
}

void RecordingBuilder::external_correlation(int64_t correlation, int64_t external_id) {
  w_.put(store::ExternalCorrelationRow{pid_, correlation, external_id});
}

template <class Row>
int64_t RecordingBuilder::paired(store::ApiCallRow& call, Row& caused, int64_t external_id) {
  const int64_t correlation = next_correlation();
  call.correlation = caused.correlation = correlation;
  add(call);
  if (external_id != store::kNull) w_.put(store::ExternalCorrelationRow{call.pid, correlation, external_id});
  add(caused);
  return correlation;
}

int64_t RecordingBuilder::launch(store::ApiCallRow call, store::KernelRow work, int64_t external_id) {
  return paired(call, work, external_id);
}

int64_t RecordingBuilder::launch(store::ApiCallRow call, store::MemcpyRow work, int64_t external_id) {
  return paired(call, work, external_id);
}

int64_t RecordingBuilder::launch(store::ApiCallRow call, store::MemsetRow work, int64_t external_id) {
  return paired(call, work, external_id);
}

int64_t RecordingBuilder::launch(store::ApiCallRow call, store::SyncRow wait, int64_t external_id) {
  return paired(call, wait, external_id);
}

}  // namespace gpuscope::test_support
