// The CUPTI lifecycle's table (cupti_source.h, State): which moves are allowed
// and the states' names; cupti_source.cpp makes the moves.
#include "collector/cupti_source.h"

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
    case State::kDraining:  // disarmed (a resume, a graph, a failed drain, stop()) or torn down
      return to == State::kSubscribed || to == State::kTornDown;
    case State::kTornDown:  // a resume subscribes again
      return to == State::kSubscribed;
    case State::kStopped:
      return false;
  }
  return false;
}

const char* state_name(State s) {
  switch (s) {
    case State::kOff:
      return "off";
    case State::kDormant:
      return "dormant";
    case State::kSubscribed:
      return "subscribed";
    case State::kTracing:
      return "tracing";
    case State::kDraining:
      return "draining";
    case State::kTornDown:
      return "torn down";
    case State::kStopped:
      return "stopped";
  }
  return "?";
}

}  // namespace gpuscope::collector::cupti_source
