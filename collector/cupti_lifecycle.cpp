// The CUPTI lifecycle's table (cupti_source.h, State): which moves are allowed
// and the states' names; cupti_source.cpp makes the moves.
#include "collector/cupti_source.h"

#include <cstddef>
#include <iterator>

namespace gpuscope::collector::cupti_source {

bool transition_allowed(State from, State to) {
  switch (from) {
    case State::kOff:  // start(); wait_dormant()
      return to == State::kDormant || to == State::kSubscribed || to == State::kTracing;
    case State::kDormant:  // start() at the first capture
      return to == State::kSubscribed || to == State::kTracing;
    case State::kSubscribed:  // a resume; stop()
      return to == State::kTracing || to == State::kStopped;
    case State::kTracing:  // a pause, with or without a teardown to come; stop()
      return to == State::kSubscribed || to == State::kDraining || to == State::kStopped;
    case State::kDraining:  // disarmed (a resume, a graph, given up, stop()), torn down, or not now
      return to == State::kSubscribed || to == State::kTornDown || to == State::kDeferred;
    case State::kDeferred:  // armed again at the next step boundary; disarmed as from draining
      return to == State::kDraining || to == State::kSubscribed;
    case State::kTornDown:  // a resume subscribes again
      return to == State::kSubscribed;
    case State::kStopped:
      return false;
  }
  return false;
}

const char* state_name(State s) {
  // In State's order.
  static constexpr const char* kNames[] = {"off", "dormant", "subscribed", "tracing", "draining", "torn down", "deferred",
                                                 "stopped"};
  static_assert(std::size(kNames) == static_cast<size_t>(State::kStopped) + 1, "a name for every state");
  const auto i = static_cast<size_t>(s);
  return i < std::size(kNames) ? kNames[i] : "?";
}

}  // namespace gpuscope::collector::cupti_source
