// Every stored field of one event, for the details panel: the row of its table
// read by primary key, with names, enum codes and times made readable.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gui/model/timeline_data.h"

namespace gpuscope::store {
class Reader;
}

namespace gpuscope::gui {

struct DetailField {
  std::string name, value;
};

class DetailsSource {
 public:
  // Opens its own read connection (the GUI thread's). Throws gpuscope::Error.
  DetailsSource(const std::string& database, std::shared_ptr<const StringTable> strings);
  ~DetailsSource();
  std::vector<DetailField> fields(const Event& e);

 private:
  std::string decode(const std::string& table, const std::string& column, int64_t v) const;
  std::unique_ptr<store::Reader> reader_;
  std::shared_ptr<const StringTable> strings_;
  std::map<std::pair<std::string, int64_t>, std::string> enums_;  // (type, value) -> name
};

}  // namespace gpuscope::gui
