// A stand-in libgpuscope_torch.so: only the export doctor asks, built for
// FAKE_BUILT_FOR. Loads into any python, torch or not.
#define FAKE extern "C" __attribute__((visibility("default")))

FAKE const char* gpuscope_plugin_built_for() { return FAKE_BUILT_FOR; }
