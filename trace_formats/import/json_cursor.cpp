#include "trace_formats/import/json_cursor.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "trace_formats/common/text.h"

namespace gpuscope::formats::json {

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min() + 1;  // kMin itself is store::kNull

int64_t saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2e18) return kMax;
  if (v <= -9.2e18) return kMin;
  return static_cast<int64_t>(v);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// True when any byte of w is '"' or '\\' (classic has-zero-byte trick).
inline bool has_quote_or_backslash(uint64_t w) {
  constexpr uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
  return (((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
}

}  // namespace

int64_t Number::to_int64() const {
  if (simple) return negative ? -static_cast<int64_t>(whole) : static_cast<int64_t>(whole);  // truncates
  if (is_integer) {
    const char* s = text.data();
    const char* e = s + text.size();
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s, e, v);
    if (ec == std::errc() && ptr == e) return v == std::numeric_limits<int64_t>::min() ? kMin : v;
  }
  return saturate(to_double());
}

std::optional<int64_t> Number::to_int64_checked() const {
  if (simple) return to_int64();
  if (is_integer) {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && ptr == text.data() + text.size()) return v == std::numeric_limits<int64_t>::min() ? kMin : v;
    return std::nullopt;
  }
  const double d = to_double();
  if (!(d < 9.2e18 && d > -9.2e18)) return std::nullopt;
  return static_cast<int64_t>(d);
}

double Number::to_double() const {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves v alone: tell overflow from underflow by the exponent's sign.
    const size_t e = text.find_first_of("eE");
    const bool tiny = e != std::string_view::npos && e + 1 < text.size() && text[e + 1] == '-';
    if (tiny) return 0.0;
    const double inf = std::numeric_limits<double>::infinity();
    return text.starts_with('-') ? -inf : inf;
  }
  return v;
}

int64_t Number::us_to_ns() const {
  if (simple && whole <= static_cast<uint64_t>(kMax / 1000 - 1)) {
    int64_t v = static_cast<int64_t>(whole) * 1000 + milli;
    return negative ? -v : v;
  }
  // Exact path for [-]digits[.digits] without an exponent, from the text.
  const char* s = text.data();
  const char* e = s + text.size();
  bool neg = s < e && *s == '-';
  if (neg) ++s;
  uint64_t whole = 0;
  int digits = 0;
  while (s < e && *s >= '0' && *s <= '9') {
    whole = whole * 10 + static_cast<uint64_t>(*s - '0');
    if (++digits > 18) return saturate(std::round(to_double() * 1000.0));
    ++s;
  }
  if (whole > static_cast<uint64_t>(kMax / 1000 - 1)) return saturate(std::round(to_double() * 1000.0));
  int64_t frac = 0;
  if (s < e && *s == '.') {
    ++s;
    int n = 0;
    while (s < e && *s >= '0' && *s <= '9') {
      if (n < 3) frac = frac * 10 + (*s - '0');
      else if (n == 3 && *s >= '5') frac += 1;  // round half up on the 4th decimal
      ++n;
      ++s;
    }
    for (; n < 3; ++n) frac *= 10;
  }
  if (s != e) return saturate(std::round(to_double() * 1000.0));  // exponent
  int64_t v = static_cast<int64_t>(whole) * 1000 + frac;
  return neg ? -v : v;
}

void Cursor::fail(std::string what) const { throw SyntaxError{offset(), std::move(what)}; }

void Cursor::more() const {
  if (final_) throw SyntaxError{offset(), "unexpected end of data (truncated JSON)"};
  throw NeedMore{};
}

Kind Cursor::peek_kind() {
  switch (peek()) {
    case '"': return Kind::kString;
    case '{': return Kind::kObject;
    case '[': return Kind::kArray;
    case 't': return Kind::kTrue;
    case 'f': return Kind::kFalse;
    case 'n': return Kind::kNull;
    default: return Kind::kNumber;
  }
}

bool Cursor::next_member(char close) {
  char c = peek();
  if (c == ',') {
    ++p;
    return true;
  }
  if (c == close) {
    ++p;
    return false;
  }
  fail(std::string("expected ',' or '") + close + "'");
}

bool Cursor::skip_string_rest() {
  bool escaped = false;
  for (;;) {
#ifdef __SSE2__
    // Names (kernel names above all) are long: 16 bytes per step.
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
    while (end_ - p >= 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      int mask = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)));
      if (mask) {
        p += __builtin_ctz(static_cast<unsigned>(mask));
        break;
      }
      p += 16;
    }
#endif
    while (end_ - p >= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      if (has_quote_or_backslash(w)) break;
      p += 8;
    }
    while (p < end_ && *p != '"' && *p != '\\') ++p;
    if (p >= end_) more();
    if (*p == '"') {
      ++p;
      return escaped;
    }
    // Backslash: validate the escape, skip it.
    escaped = true;
    if (end_ - p < 2) more();
    char c = p[1];
    if (c == 'u') {
      if (end_ - p < 6) more();
      for (int i = 2; i < 6; ++i)
        if (hex_value(p[i]) < 0) fail("bad \\u escape in string");
      p += 6;
    } else if (std::strchr("\"\\/bfnrt", c) && c != 0) {
      p += 2;
    } else {
      fail("bad escape in string");
    }
  }
}

void Cursor::decode_escape(std::string& out) {
  // p at the backslash; the whole escape is known to be in the window.
  char c = p[1];
  switch (c) {
    case '"': out += '"'; break;
    case '\\': out += '\\'; break;
    case '/': out += '/'; break;
    case 'b': out += '\b'; break;
    case 'f': out += '\f'; break;
    case 'n': out += '\n'; break;
    case 'r': out += '\r'; break;
    case 't': out += '\t'; break;
    case 'u': {
      uint32_t cp = 0;
      for (int i = 2; i < 6; ++i) cp = cp * 16 + static_cast<uint32_t>(hex_value(p[i]));
      p += 6;
      // A surrogate pair becomes one code point; a lone surrogate becomes U+FFFD.
      if (cp >= 0xD800 && cp < 0xDC00 && end_ - p >= 6 && p[0] == '\\' && p[1] == 'u') {
        uint32_t lo = 0;
        bool ok = true;
        for (int i = 2; i < 6; ++i) {
          int h = hex_value(p[i]);
          if (h < 0) ok = false;
          lo = lo * 16 + static_cast<uint32_t>(h < 0 ? 0 : h);
        }
        if (ok && lo >= 0xDC00 && lo < 0xE000) {
          p += 6;
          append_utf8(out, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
          return;
        }
      }
      if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;
      append_utf8(out, cp);
      return;
    }
  }
  p += 2;
}

std::string_view Cursor::decode_string(const char* start, Scratch& scratch) {
  const char* stop = p - 1;
  std::string& out = scratch.next();
  const char* save = p;
  p = start;
  while (p < stop) {
    const char* bs = static_cast<const char*>(std::memchr(p, '\\', static_cast<size_t>(stop - p)));
    if (!bs) {
      out.append(p, stop);
      break;
    }
    out.append(p, bs);
    p = bs;
    decode_escape(out);
  }
  p = save;
  return out;
}

Number Cursor::number() {
  skip_ws();
  const char* start = p;
  Number n;
  if (p < end_ && *p == '-') {
    n.negative = true;
    ++p;
  }
  const char* digits = p;
  uint64_t whole = 0;
  while (p < end_ && *p >= '0' && *p <= '9') whole = whole * 10 + static_cast<uint64_t>(*p++ - '0');
  if (p == digits) {
    if (p >= end_) more();
    fail("expected a value");
  }
  n.simple = p - digits <= 18;
  n.whole = whole;
  if (p < end_ && *p == '.') {
    n.is_integer = false;
    const char* f = ++p;
    int64_t milli = 0;
    while (p < end_ && *p >= '0' && *p <= '9') {
      auto k = p - f;
      if (k < 3) milli = milli * 10 + (*p - '0');
      else if (k == 3 && *p >= '5') milli += 1;
      ++p;
    }
    for (auto k = p - f; k < 3; ++k) milli *= 10;
    n.milli = milli;
    if (p == f && p < end_) fail("bad number");
  }
  if (p < end_ && (*p == 'e' || *p == 'E')) {
    n.simple = false;
    n.is_integer = false;
    ++p;
    if (p < end_ && (*p == '+' || *p == '-')) ++p;
    const char* x = p;
    while (p < end_ && *p >= '0' && *p <= '9') ++p;
    if (p == x && p < end_) fail("bad number");
  }
  // A number touching the window's end may continue in the next one.
  if (p >= end_) more();
  n.text = {start, static_cast<size_t>(p - start)};
  return n;
}

bool Cursor::bare_word_slow() {
  static constexpr std::string_view words[] = {"N/A", "NaN", "nan", "-nan", "Infinity",
                                               "-Infinity", "inf", "-inf"};
  for (std::string_view w : words) {
    size_t avail = static_cast<size_t>(end_ - p);
    size_t k = std::min(avail, w.size());
    if (std::memcmp(p, w.data(), k) != 0) continue;
    if (avail <= w.size()) more();  // need the byte after the word too
    char after = p[w.size()];
    if ((after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') || after == '/') continue;
    p += w.size();
    return true;
  }
  return false;
}

void Cursor::skip(int depth) {
  if (depth > kMaxDepth) fail("nesting deeper than 256 levels");
  skip_ws();
  switch (*p) {
    case '"':
      skip_string();
      return;
    case '{':
      ++p;
      if (consume('}')) return;
      do {
        if (peek() != '"') fail("expected a member name");
        skip_string();
        expect(':');
        skip(depth + 1);
      } while (next_member('}'));
      return;
    case '[':
      ++p;
      if (consume(']')) return;
      do skip(depth + 1);
      while (next_member(']'));
      return;
    case 't':
    case 'f':
    case 'n': {
      std::string_view w = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
      size_t avail = static_cast<size_t>(end_ - p);
      if (std::memcmp(p, w.data(), std::min(avail, w.size())) != 0) {
        if (bare_word()) return;
        fail("expected a value");
      }
      if (avail < w.size()) more();
      p += w.size();
      return;
    }
    default:
      if (bare_word()) return;
      number();
  }
}

}  // namespace gpuscope::formats::json
