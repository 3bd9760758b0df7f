// NVML samples (SM utilization, memory used, power, SM clock), taken by the
// writer thread at 10 Hz when libnvidia-ml loads. Devices are NVML indices.
#pragma once

#include "collector/row_sink.h"

namespace gpuscope::collector {

class NvmlSampler {
 public:
  // Returns false (and stays inert) when NVML is missing or has no devices.
  bool start();
  void sample(uint64_t now, RowSink& sink);
  void stop();

 private:
  struct Api;
  Api* api_ = nullptr;
  unsigned devices_ = 0;
};

}  // namespace gpuscope::collector
