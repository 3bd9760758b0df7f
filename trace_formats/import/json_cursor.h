// A small, strict JSON tokenizer over one buffer window. The importer parses one
// array element at a time; when the window ends inside a value and more input
// may follow, the cursor throws NeedMore and the caller refills the window and
// restarts that element from its first byte. Nothing is allocated per token:
// strings come back as views into the window unless they hold escapes.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace gpuscope::formats::json {

struct NeedMore {};

struct SyntaxError {
  uint64_t offset;  // byte offset in the (decompressed) input
  std::string what;
};

// Holds decoded strings (those with escapes) for the element being parsed.
class Scratch {
 public:
  std::string& next() {
    if (used_ == pool_.size()) pool_.emplace_back();
    std::string& s = pool_[used_++];
    s.clear();
    return s;
  }
  void reset() { used_ = 0; }

 private:
  std::deque<std::string> pool_;  // deque: references stay valid as it grows
  size_t used_ = 0;
};

struct Number {
  std::string_view text;
  bool is_integer = true;  // no fraction, no exponent
  // Filled by Cursor::number() while scanning, so that the common conversions
  // need no second pass: no exponent and at most 18 integer digits.
  bool simple = false, negative = false;
  uint64_t whole = 0;  // integer part
  int64_t milli = 0;   // first three decimals, rounded half up on the fourth

  // Integer value, truncating fractions; saturates on overflow.
  int64_t to_int64() const;
  // As to_int64, but nullopt where that saturates (beyond int64, e.g. 2^64, 1e300).
  std::optional<int64_t> to_int64_checked() const;
  // Beyond double's range (1e999) is +-infinity, not 0.
  double to_double() const;
  // Microseconds (as Chrome trace `ts`/`dur`) to integer nanoseconds, exact for
  // up to three decimals, rounded beyond.
  int64_t us_to_ns() const;
};

enum class Kind { kString, kNumber, kTrue, kFalse, kNull, kObject, kArray };

class Cursor {
 public:
  static constexpr int kMaxDepth = 256;

  Cursor(const char* begin, const char* end, bool final, uint64_t base_offset)
      : p(begin), end_(end), begin_(begin), final_(final), base_(base_offset) {}

  const char* p;

  // Next non-space byte without consuming it.
  char peek() {
    skip_ws();
    return *p;
  }
  Kind peek_kind();
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++p;
  }
  bool consume(char c) {
    if (peek() != c) return false;
    ++p;
    return true;
  }
  // After a member/element: true if another follows (a ','), false at `close`.
  bool next_member(char close);

  std::string_view string(Scratch& scratch) {
    skip_ws();
    if (*p != '"') fail("expected a string");
    const char* start = p + 1;
    if (!skip_string()) return {start, static_cast<size_t>(p - 1 - start)};
    return decode_string(start, scratch);
  }
  Number number();
  // Skips any value; returns its text. Validates it strictly.
  std::string_view skip_value() {
    skip_ws();
    const char* start = p;
    skip(0);
    return {start, static_cast<size_t>(p - start)};
  }
  // Lenient scalars seen in real torch traces: bare N/A, NaN, Infinity. Returns
  // true (and consumes them) when one is next; always false once set_strict().
  bool bare_word() {
    if (strict_) return false;
    skip_ws();
    // Numbers are by far the common case: reject them before any comparison.
    if (*p >= '0' && *p <= '9') return false;
    if (*p == '-' && end_ - p >= 2 && p[1] >= '0' && p[1] <= '9') return false;
    return bare_word_slow();
  }
  void set_strict() { strict_ = true; }

  uint64_t offset() const { return base_ + static_cast<uint64_t>(p - begin_); }
  [[noreturn]] void fail(std::string what) const;
  [[noreturn]] void more() const;

 private:
  void skip_ws() {
    for (;;) {
      while (p < end_ && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
      if (p < end_) return;
      more();
    }
  }
  bool bare_word_slow();
  void skip(int depth);
  // Returns true when the string held an escape. Most strings are member
  // names and short values with no escape that end well inside the window:
  // one 16-byte compare finds their end here, inline; callgrind counted ~80
  // instructions per string when every string took the general loop.
  bool skip_string() {
    ++p;  // opening quote
#ifdef __SSE2__
    if (end_ - p >= 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      int mask = _mm_movemask_epi8(
          _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
      if (mask) {
        const char* q = p + __builtin_ctz(static_cast<unsigned>(mask));
        if (*q == '"') {
          p = q + 1;
          return false;
        }
      }
    }
#endif
    return skip_string_rest();
  }
  // skip_string() past the opening quote, for any string.
  bool skip_string_rest();
  // The text of a string with escapes, from after its opening quote; p is
  // past its closing quote.
  std::string_view decode_string(const char* start, Scratch& scratch);
  void decode_escape(std::string& out);

  const char* end_;
  const char* begin_;
  bool final_;
  bool strict_ = false;
  uint64_t base_;
};

}  // namespace gpuscope::formats::json
