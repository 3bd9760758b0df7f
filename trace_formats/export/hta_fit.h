// Host events as HTA reads them. HTA's default JSON backend rounds each
// event's fractional ts up and ts + dur down to whole microseconds
// (trace_parser.py, "Rounding down ns resolution events"), so an event lying
// inside one microsecond would end before it starts and its temporal
// breakdown asserts. On a GPU row such an event simply starts at its
// microsecond's beginning (ChromeWriter::hta_start); on a CPU thread moving
// one event would cut into its parent or its neighbours (TensorBoard nests
// by ts + dur), so the whole row goes through one monotone map instead: in a
// microsecond holding such events, the ends lying between its beginning and
// the last such event's start move to the beginning (or those between the
// first such end and the microsecond's end move to that end, whichever moves
// less). Being monotone the map keeps every nesting and every order (events
// may come to touch, never to cross), it never moves a point by a
// microsecond or more, never moves a whole microsecond, and each such event
// then holds one. Fixed points (the bounds of the steps on the row, which
// other exports and TensorBoard's step parser read exactly) are never moved
// nor crossed: an event boxed in between two of them inside one microsecond
// stays as it is. Soft ones (the steps' bounds on the process's other rows)
// are crossed only by an event boxed in between two of them (steps less than
// a microsecond apart).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace gpuscope::formats {

// An event HTA's rounding gives a negative duration: [start, end] ns lies
// strictly inside one microsecond (or is an instant not on a whole one).
bool hta_negative(int64_t start, int64_t end);

class HtaFit {
 public:
  // `spans`: the events of one row, ns; `fixed`: points that must stay where
  // they are (and not be crossed); `soft`: points not crossed where avoidable.
  HtaFit(const std::vector<std::pair<int64_t, int64_t>>& spans, std::vector<int64_t> fixed,
         std::vector<int64_t> soft = {});
  // Where a point of the row goes.
  int64_t operator()(int64_t ns) const;
  bool empty() const { return moves_.empty(); }
  // Events left with a negative rounded duration (boxed in by fixed points).
  int64_t unfixed() const { return unfixed_; }

 private:
  struct Move {
    int64_t us;          // the microsecond
    int64_t left = -1;   // points in (us*1000, us*1000 + left] go to us*1000 (-1: none)
    int64_t right = -1;  // points in [us*1000 + right, us*1000 + 1000) go to (us+1)*1000 (-1: none)
  };
  std::vector<Move> moves_;  // by us
  int64_t unfixed_ = 0;
};

}  // namespace gpuscope::formats
