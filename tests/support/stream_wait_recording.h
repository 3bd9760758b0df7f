// A synthetic recording with one stream wait (schema v2's links), for the
// exporters' flow arrows: two streams of one process, a producer kernel on
// stream 7, cudaEventRecord on stream 7, stream 13 waiting for that record,
// then a consumer kernel on stream 13. A kernel on stream 13 launched before
// the wait must get no arrow; a stream synchronize links nothing. Three steps
// frame it, so the step checks run on it too; in the last, stream 13 waits for
// two records before its consumer (four arrows in all, each to a consumer).
// Each step ends with the host waiting (cudaEventSynchronize) for an event
// recorded on stream 13 after the consumer.
#pragma once

#include <cstdint>
#include <string>

namespace gpuscope::test_support {

struct StreamWaitRecording {
  int64_t pid = 0;
  int64_t record_correlation = 0;  // the cudaEventRecord call
  int64_t wait_correlation = 0;    // the cudaStreamWaitEvent call and its sync row
  int64_t consumer_correlation = 0;
  int64_t consumer_start = 0;      // ns; the consumer kernel on stream 13
  int64_t event_sync_correlation = 0;  // a cudaEventSynchronize on an event recorded after the consumer
  int64_t waiting_stream = 13, recorded_stream = 7;
};

// Writes it at `path` (replacing a file there) and says where the links are.
StreamWaitRecording write_stream_wait_recording(const std::string& path);

}  // namespace gpuscope::test_support
