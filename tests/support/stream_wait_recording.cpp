#include "tests/support/stream_wait_recording.h"

#include "tests/support/recording_builder.h"

namespace gpuscope::test_support {

StreamWaitRecording write_stream_wait_recording(const std::string& path) {
  namespace st = schema::sync_type;
  StreamWaitRecording out;
  out.pid = 100;
  RecordingBuilder b(path);
  b.process(python_process(out.pid));
  b.device({.id = 0, .name = "GPU", .sm_count = 132});
  const int64_t step_ns = 100'000;
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t t = 1'000'000 + i * step_ns;
    b.step(i, t, t + step_ns - 1'000);
    b.op({.name = "aten::mm", .start = t + 500, .end = t + 40'000});
    b.launch({.name = "cudaLaunchKernel", .start = t + 1'000, .end = t + 2'000},
             {.device = 0, .context = 1, .stream = 7, .start = t + 3'000, .end = t + 30'000, .name = "producer"});
    // On the waiting stream before the wait: not the waiting work. The calls
    // last a microsecond or more, as real ones do (the Chrome export collapses
    // a run of sub-microsecond calls for HTA's rounding: trace_formats/export/hta_fit.h).
    b.launch({.name = "cudaLaunchKernel", .start = t + 2'050, .end = t + 3'300},
             {.device = 0, .context = 1, .stream = 13, .start = t + 3'500, .end = t + 3'900, .name = "early"});
    const int64_t record = b.next_correlation();
    b.api({.name = "cudaEventRecord", .start = t + 3'400, .end = t + 4'600, .correlation = record});
    const int64_t wait = b.launch({.name = "cudaStreamWaitEvent", .start = t + 4'700, .end = t + 5'900},
                                  store::SyncRow{.type = st::stream_wait_event, .context = 1, .stream = 13, .event = 3,
                                                 .start = t + 4'700, .end = t + 5'900, .wait_stream = 7,
                                                 .event_correlation = record});
    if (i == 2) {
      // The last step waits for two records of stream 7: both arrows end on the consumer.
      const int64_t again = b.next_correlation();
      b.api({.name = "cudaEventRecord", .start = t + 6'000, .end = t + 7'200, .correlation = again});
      b.launch({.name = "cudaStreamWaitEvent", .start = t + 7'300, .end = t + 8'500},
               store::SyncRow{.type = st::stream_wait_event, .context = 1, .stream = 13, .event = 4,
                              .start = t + 7'300, .end = t + 8'500, .wait_stream = 7, .event_correlation = again});
    }
    // Its kernel: sub-microsecond, inside one microsecond, HTA's rounding case.
    const int64_t consumer = b.launch({.name = "cudaLaunchKernel", .start = t + 8'600, .end = t + 9'800},
                                      {.device = 0, .context = 1, .stream = 13, .start = t + 30'100,
                                       .end = t + 30'700, .name = "consumer"});
    b.launch({.name = "cudaStreamSynchronize", .start = t + 9'900, .end = t + 31'000},
             store::SyncRow{.type = st::stream_synchronize, .context = 1, .stream = 13, .start = t + 9'900,
                            .end = t + 31'000});
    // The host waits for an event recorded on stream 13 after the consumer
    // (cudaEventSynchronize, linked to its record): its arrow starts on the
    // consumer, the last work on the stream before the record.
    const int64_t done = b.next_correlation();
    b.api({.name = "cudaEventRecord", .start = t + 31'100, .end = t + 32'300, .correlation = done});
    const int64_t event_sync =
        b.launch({.name = "cudaEventSynchronize", .start = t + 32'400, .end = t + 33'600},
                 store::SyncRow{.type = st::event_synchronize, .context = 1, .event = 5, .start = t + 32'400,
                                .end = t + 33'600, .wait_stream = 13, .event_correlation = done});
    if (i == 0) {
      out.event_sync_correlation = event_sync;
      out.record_correlation = record;
      out.wait_correlation = wait;
      out.consumer_correlation = consumer;
      out.consumer_start = t + 30'100;
    }
  }
  b.finish();
  return out;
}

}  // namespace gpuscope::test_support
