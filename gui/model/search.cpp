#include "gui/model/search.h"

#include <QRegularExpression>

#include <algorithm>
#include <cctype>

namespace gpuscope::gui {

std::vector<bool> match_names(const StringTable& strings, const QString& pattern, bool regex,
                              QString* error) {
  std::vector<bool> mask(strings.size(), false);
  if (error) error->clear();
  if (pattern.isEmpty()) return mask;
  if (regex) {
    QRegularExpression re(pattern, QRegularExpression::CaseInsensitiveOption);
    if (!re.isValid()) {
      if (error) *error = re.errorString();
      return mask;
    }
    re.optimize();
    for (size_t i = 0; i < strings.size(); ++i)
      mask[i] = re.match(QString::fromStdString(strings[i])).hasMatch();
    return mask;
  }
  // Substring: names are mostly ASCII; compare bytes case-insensitively.
  const std::string needle = pattern.toStdString();
  auto eq = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  for (size_t i = 0; i < strings.size(); ++i) {
    const auto& s = strings[i];
    mask[i] = std::search(s.begin(), s.end(), needle.begin(), needle.end(), eq) != s.end();
  }
  return mask;
}

}  // namespace gpuscope::gui
