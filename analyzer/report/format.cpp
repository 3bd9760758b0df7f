#include "analyzer/report/format.h"

#include <cmath>
#include <cstdio>

namespace gpuscope::analyzer::report {

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) v = 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s(buf);
  // "-0.000" reads as a sign error in a report.
  if (s.starts_with("-") && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string ms(int64_t ns) { return fixed(static_cast<double>(ns) / 1e6, 3); }
std::string ms_unit(double v) { return fixed(v, 3) + " ms"; }
std::string percent(double f) { return fixed(100 * f, 1) + " %"; }

std::string bytes(double b) {
  if (b < 0) return "n/a";
  if (b >= 1e9) return fixed(b / 1e9, 2) + " GB";
  if (b >= 1e6) return fixed(b / 1e6, 1) + " MB";
  if (b >= 1e3) return fixed(b / 1e3, 1) + " kB";
  return fixed(b, 0) + " B";
}

std::string seconds(int64_t ns) { return fixed(static_cast<double>(ns) / 1e9, 6) + " s"; }

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
    if (ok && len == 2) ok = c >= 0xC2;                                               // overlong
    if (ok && len == 3) {
      auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);                   // overlong, surrogates
    }
    if (ok && len == 4) {
      auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = c <= 0xF4 && !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::string plain(std::string_view s, size_t max) {
  std::string v = valid_utf8(s), out;
  size_t chars = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    auto c = static_cast<unsigned char>(v[i]);
    if ((c & 0xC0) != 0x80) {
      if (chars == max) {
        out += "...";
        break;
      }
      ++chars;
    }
    out += (c < 0x20 || c == 0x7F) ? '?' : v[i];
  }
  return out;
}

std::string html_escape(std::string_view s) {
  std::string v = valid_utf8(s), out;
  out.reserve(v.size());
  for (char ch : v) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t') out += "&#xFFFD;";
        else out += ch;
    }
  }
  return out;
}

std::string md_escape(std::string_view s) {
  std::string v = plain(s), out;
  for (char ch : v) {
    if (ch == '|' || ch == '`' || ch == '*' || ch == '_' || ch == '[' || ch == ']' || ch == '\\') out += '\\';
    if (ch == '<') { out += "&lt;"; continue; }
    if (ch == '>') { out += "&gt;"; continue; }
    out += ch;
  }
  return out;
}

std::string untraced_line(const Analysis& a) {
  const Summary& s = a.summary;
  if (s.untraced_step_ms <= 0)
    return "untraced step time unknown: " + s.untraced_unknown + "; savings are judged against the traced step of " +
           fixed(s.traced_step_ms, 3) + " ms, which includes gpuscope's cost";
  const double cost = s.tracing_cost_pct;
  return "untraced step " + fixed(s.untraced_step_ms, 3) + " ms (" +
         (s.untraced_method == "gpu_drained" ? "GPU time of the untraced steps" : "median of the untraced steps") +
         "), traced " + fixed(s.traced_step_ms, 3) + " ms: tracing cost " + (cost >= 0 ? "+" : "") + fixed(cost, 1) +
         " %; savings are judged against the untraced step";
}

std::string cross_rank_scope_line(const Analysis& a) {
  const Summary& s = a.summary;
  std::string who = "process " + std::to_string(s.pid);
  for (const auto& r : a.ranks)
    if (r.analysed) who = "rank " + std::to_string(r.rank) + " (pid " + std::to_string(s.pid) + ")";
  return std::to_string(a.ranks.size()) + " ranks; savings are a share of the step of " + who + ", " +
         (s.untraced_step_ms > 0 ? fixed(s.untraced_step_ms, 3) + " ms untraced (" + fixed(s.traced_step_ms, 3) + " ms traced)"
                                 : fixed(s.traced_step_ms, 3) + " ms traced (untraced step unknown)");
}

std::string scope_line(const Analysis& a) {
  const Summary& s = a.summary;
  std::string line = "process " + std::to_string(s.pid);
  for (const auto& r : a.ranks)
    if (r.analysed) line += " (rank " + std::to_string(r.rank) + " of " + std::to_string(a.ranks.size()) + ")";
  if (s.device >= 0) {
    line += ", device " + std::to_string(s.device);
    for (const auto& d : s.devices)
      if (d.id == s.device && !d.name.empty()) line += " (" + d.name + ")";
  } else {
    line += ", no GPU activity";
  }
  line += ", " + std::to_string(s.steps) + " steps";
  if (s.steps > 0 && s.step_source != StepSource::kWholeRecording)
    line += " (" + std::to_string(s.first_step) + "-" + std::to_string(s.last_step) + " of " +
            std::to_string(s.steps_recorded) + ")";
  line += s.step_source == StepSource::kWholeRecording ? ": " + s.step_source_detail : " from " + s.step_source_detail;
  if (s.warmup_skipped > 0) line += ", " + std::to_string(s.warmup_skipped) + " warm-up skipped";
  if (s.steps_untraced > 0) line += ", " + std::to_string(s.steps_untraced) + " untraced (sampled)";
  return line;
}

}  // namespace gpuscope::analyzer::report
