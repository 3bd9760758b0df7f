/* The collector's C API for captures in its own process (docs/on-demand.md),
 * exported by libgpuscope_collector.so for callers such as a Python
 * `gpuscope.profile()` through ctypes. Plain C, no gpuscope header needed.
 *
 * The process must run the collector on demand: started by `gpuscope record
 * --on-demand -- ...` (or LD_PRELOAD=libgpuscope_collector.so with
 * GPUSCOPE_TRACE_STEPS=on-demand), or attached with gpuscope_attach() after
 * the library was dlopen'ed. Otherwise every call fails with a reason.
 *
 * Every function returns at once except gpuscope_capture_stop, never throws,
 * and is safe from any thread. `err` (may be NULL) receives a one-line reason,
 * NUL-terminated, cut to errlen bytes. */
#ifndef GPUSCOPE_COLLECTOR_ONDEMAND_API_H
#define GPUSCOPE_COLLECTOR_ONDEMAND_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* gpuscope_capture_state(): where the process is. */
enum gpuscope_capture_state_code {
  GPUSCOPE_CAPTURE_UNAVAILABLE = -1, /* the collector is not on demand here */
  GPUSCOPE_CAPTURE_DORMANT = 0,      /* nothing recorded; steps counted */
  GPUSCOPE_CAPTURE_WAITING = 1,      /* begins at the next step boundary */
  GPUSCOPE_CAPTURE_CONTROL = 2,      /* recording, the control stretch runs untraced */
  GPUSCOPE_CAPTURE_TRACING = 3,      /* the traced steps */
  GPUSCOPE_CAPTURE_FINISHING = 4     /* traced steps done; CUPTI torn down, the file being closed */
};

/* Starts a capture into `path`, a new file (an existing one is refused). It
 * begins at the next step boundary of the torch plugin: GPUSCOPE_CONTROL_STEPS'
 * N steps (at least MS ms, default 8 and 200 ms) run untraced to time the job,
 * then `steps` steps are traced, or the steps of `seconds` seconds; both 0:
 * traced until gpuscope_capture_stop. Without torch steps the capture is
 * timed (`seconds`), with no control stretch. The file is finalized (as
 * `gpuscope record` does) when the capture ends; it is a normal recording.
 * 0 on success, -1 with a reason (another capture under way, not on demand,
 * the file cannot be created). */
int gpuscope_capture_start(const char* path, int steps, double seconds, char* err, size_t errlen);

/* The same with the control stretch's steps given: 0 none, -1 the default. */
int gpuscope_capture_start_ex(const char* path, int steps, double seconds, int control_steps, char* err,
                              size_t errlen);

/* Ends the capture under way now (its traced stretch ends here, mid-step if
 * need be: that step is not kept) and waits until its file is finalized and
 * the process is dormant again (a few hundred ms, up to 60 s for a large
 * capture). A capture that already ended by itself: waits for its file.
 * 0 on success, -1 with a reason (no capture, not on demand). */
int gpuscope_capture_stop(char* err, size_t errlen);

/* A gpuscope_capture_state_code. */
int gpuscope_capture_state(void);

/* Steps ended in this process so far (the torch plugin's step boundaries); -1
 * when not on demand. */
long long gpuscope_steps_ended(void);

/* For a library dlopen'ed into a running process (CUDA and torch may be
 * initialized already): starts the collector dormant and on demand, loads the
 * torch plugin if torch is there, opens the control channel. CUPTI is
 * subscribed at the first capture. Device properties CUDA reported before
 * are not recorded then. 0 on success (also when already on demand), -1 when
 * the collector already records this process otherwise (`gpuscope record`
 * without --on-demand). */
int gpuscope_attach(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUSCOPE_COLLECTOR_ONDEMAND_API_H */
