// A stand-in libnvidia-ml.so.1 for the doctor tests: two GPUs, or, with
// FAKE_NVML_INIT=<code> in the environment, an nvmlInit_v2 that fails so.
#include <cstdlib>
#include <cstring>

#define FAKE extern "C" __attribute__((visibility("default")))

FAKE int nvmlInit_v2() {
  const char* code = std::getenv("FAKE_NVML_INIT");
  return code ? std::atoi(code) : 0;
}
FAKE int nvmlShutdown() { return 0; }
FAKE const char* nvmlErrorString(int code) { return code == 9 ? "Driver Not Loaded" : "Unknown Error"; }
FAKE int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = 2;
  return 0;
}
FAKE int nvmlSystemGetDriverVersion(char* text, unsigned size) {
  std::strncpy(text, "575.57.08", size);
  return 0;
}
