// Runs independent tasks on a few threads (the analysis targets 2 cores); the
// first exception a task throws is rethrown in the caller.
#pragma once

#include <functional>
#include <vector>

namespace gpuscope::analyzer {

void run_tasks(const std::vector<std::function<void()>>& tasks);

}  // namespace gpuscope::analyzer
