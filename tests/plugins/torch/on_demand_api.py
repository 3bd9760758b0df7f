"""The collector's C API (collector/ondemand_api.h) through ctypes, in a CPU
training loop started by `gpuscope record --on-demand`: a capture of 5 steps
started at step 10 that ends by itself, one started at step 40 and ended by
gpuscope_capture_stop at step 50, and the refusals. Prints one JSON line
(ON_DEMAND_API {...}) for check_on_demand.py to judge."""
import ctypes
import json
import sys
import time

import torch
from torch import nn

out_dir = sys.argv[1]
lib = ctypes.CDLL(None)  # the collector is preloaded: its exports are global
lib.gpuscope_capture_start.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_double, ctypes.c_char_p, ctypes.c_size_t]
lib.gpuscope_capture_start_ex.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_double, ctypes.c_int, ctypes.c_char_p,
                                         ctypes.c_size_t]
lib.gpuscope_capture_stop.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
lib.gpuscope_steps_ended.restype = ctypes.c_longlong
err = ctypes.create_string_buffer(512)
result = {"states": [], "errors": {}}

model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
result["state_before"] = lib.gpuscope_capture_state()
for step in range(80):
    if step == 10:
        # 2 control steps: the default control stretch (8 steps, at least 200 ms) can outlast step 30.
        result["start_a"] = lib.gpuscope_capture_start_ex((out_dir + "/api_a.db").encode(), 5, 0.0, 2, err, len(err))
        result["steps_at_a"] = lib.gpuscope_steps_ended()
        result["start_busy"] = lib.gpuscope_capture_start((out_dir + "/api_x.db").encode(), 5, 0.0, err, len(err))
        result["errors"]["busy"] = err.value.decode()
    if 10 <= step < 30:
        result["states"].append(lib.gpuscope_capture_state())
    if step == 40:
        result["start_b"] = lib.gpuscope_capture_start_ex((out_dir + "/api_b.db").encode(), 0, 0.0, 0, err, len(err))
    if step == 50:
        result["stop_b"] = lib.gpuscope_capture_stop(err, len(err))
        result["state_after_b"] = lib.gpuscope_capture_state()
    if step == 60:
        result["stop_none"] = lib.gpuscope_capture_stop(err, len(err))
        result["start_exists"] = lib.gpuscope_capture_start((out_dir + "/api_a.db").encode(), 5, 0.0, err, len(err))
        result["errors"]["exists"] = err.value.decode()
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    time.sleep(0.01)
print("ON_DEMAND_API " + json.dumps(result), flush=True)
