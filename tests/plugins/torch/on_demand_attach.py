"""gpuscope_attach() (collector/ondemand_api.h): the collector dlopen'ed into a
running python after torch was imported, then a capture of 4 steps through the
C API. Prints one JSON line (ON_DEMAND_ATTACH {...}) for check_on_demand.py.

  on_demand_attach.py LIBGPUSCOPE_COLLECTOR OUTPUT_DB"""
import ctypes
import json
import sys
import time

import torch
from torch import nn

lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
lib.gpuscope_capture_start.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_double, ctypes.c_char_p, ctypes.c_size_t]
lib.gpuscope_steps_ended.restype = ctypes.c_longlong
err = ctypes.create_string_buffer(512)
result = {"state_loaded": lib.gpuscope_capture_state()}
result["attach"] = lib.gpuscope_attach()
result["attach_again"] = lib.gpuscope_attach()
result["state_attached"] = lib.gpuscope_capture_state()
model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 64), torch.randint(0, 10, (8,))
for step in range(40):
    if step == 5:
        result["start"] = lib.gpuscope_capture_start(sys.argv[2].encode(), 4, 0.0, err, len(err))
        result["why"] = err.value.decode()
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    time.sleep(0.01)
result["steps"] = lib.gpuscope_steps_ended()
result["state_end"] = lib.gpuscope_capture_state()
print("ON_DEMAND_ATTACH " + json.dumps(result), flush=True)
