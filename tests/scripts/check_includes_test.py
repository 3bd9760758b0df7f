#!/usr/bin/env python3
"""scripts/check_includes.py on planted trees: passes on a clean one, names a
lower file that includes its folder's entry point, and lets the outer layer
(the sources of gpuscope_collector) include it."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from planted_tree import Checks  # noqa: E402

t = Checks(pathlib.Path(sys.argv[1]) / "scripts" / "check_includes.py")
check, run = t.check, t.run

cmake = "add_library(gs_collector_core STATIC core.cpp)\nadd_library(gpuscope_collector SHARED collector.cpp hook.cpp)\n"
base = {
    "collector/CMakeLists.txt": cmake,
    "collector/collector.h": "#pragma once\n",
    "collector/collector.cpp": '#include "collector/collector.h"\n',
    "collector/hook.cpp": '#include "collector/collector.h"\n',
    "collector/core.cpp": '#include "collector/core.h"\n',
    "collector/core.h": "#pragma once\n",
}
r = run((base))
check(r.returncode == 0 and "ok" in r.stdout, f"a clean tree passes, the outer layer may include the entry point ({r.stdout.strip()})")
bad = dict(base, **{"collector/core.cpp": '#include "collector/core.h"\n  #  include "collector/collector.h"\n'})
r = run((bad))
check(r.returncode == 1 and "collector/core.cpp:2:" in r.stdout, f"a lower file including the entry point is named with its line ({r.stdout.strip()})")
bad = dict(base, **{"collector/core.h": '#pragma once\n#include "collector/collector.h"\n'})
r = run((bad))
check(r.returncode == 1 and "collector/core.h:2:" in r.stdout, "a lower header too")
bad = dict(base, **{"collector/CMakeLists.txt": "add_library(other SHARED x.cpp)\n"})
r = run((bad))
check(r.returncode == 1 and "no add_library(gpuscope_collector" in r.stdout, "a CMakeLists without the target is an error, not a pass")
bad = dict(base, **{"collector/core.cpp": '#include "core.h"\n'})
r = run((bad))
check(r.returncode == 1 and "collector/core.cpp:1: #include \"core.h\" is not a path from the repository root" in r.stdout,
      f"an include spelled from its own folder is named ({r.stdout.strip()})")
ok = dict(base, **{"collector/core.cpp": '#include "collector/core.h"\n#include "trace.pb.h"\n#include "gpuscope/plugin.h"\n',
                   "plugins/include/gpuscope/plugin.h": "#pragma once\n",
                   "plugins/torch/host.cpp": '#include "host.h"\n'})
r = run((ok))
check(r.returncode == 0, f"generated headers, the plugin API header and the stand-alone plugin pass ({r.stdout.strip()})")
t.exit()
