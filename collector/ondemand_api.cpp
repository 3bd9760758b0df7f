// The exported C API of ondemand_api.h (gpuscope_attach is in collector.cpp,
// beside the init it reaches). Exported from the shared library itself: the
// static core's symbols stay hidden (--exclude-libs).
#include "collector/ondemand_api.h"

#include <cstdio>
#include <string>

#include "collector/ondemand.h"
#include "collector/schedule.h"

namespace {

int fail(const std::string& why, char* err, size_t errlen) {
  if (err && errlen) std::snprintf(err, errlen, "%s", why.c_str());
  return -1;
}

}  // namespace

using gpuscope::collector::ondemand::Request;

extern "C" __attribute__((visibility("default"))) int gpuscope_capture_start_ex(const char* path, int steps,
                                                                                 double seconds, int control_steps,
                                                                                 char* err, size_t errlen) {
  try {
    if (!path || !*path) return fail("gpuscope_capture_start: no file given", err, errlen);
    if (steps < 0 || seconds < 0 || !(seconds == seconds))
      return fail("gpuscope_capture_start: steps and seconds must be >= 0", err, errlen);
    Request r;
    r.path = path;
    r.create = true;
    r.finalize_here = true;
    r.steps = steps;
    r.seconds = seconds;
    r.control = control_steps < 0 ? -1 : control_steps;
    r.trigger = "gpuscope_capture_start";
    std::string why;
    if (gpuscope::collector::ondemand::begin_capture(r, why) != 0) return fail(why, err, errlen);
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what(), err, errlen);
  } catch (...) {
    return fail("gpuscope_capture_start failed", err, errlen);
  }
}

extern "C" __attribute__((visibility("default"))) int gpuscope_capture_start(const char* path, int steps,
                                                                              double seconds, char* err,
                                                                              size_t errlen) {
  return gpuscope_capture_start_ex(path, steps, seconds, -1, err, errlen);
}

extern "C" __attribute__((visibility("default"))) int gpuscope_capture_stop(char* err, size_t errlen) {
  try {
    std::string why;
    if (gpuscope::collector::ondemand::end_capture(60000, why) != 0) return fail(why, err, errlen);
    return 0;
  } catch (...) {
    return fail("gpuscope_capture_stop failed", err, errlen);
  }
}

extern "C" __attribute__((visibility("default"))) int gpuscope_capture_state(void) {
  return gpuscope::collector::ondemand::state();
}

extern "C" __attribute__((visibility("default"))) long long gpuscope_steps_ended(void) {
  if (gpuscope::collector::ondemand::state() < 0) return -1;
  return static_cast<long long>(gpuscope::collector::schedule::steps_ended());
}
