// The viewer's loader says, for every column of each kind of the event stream,
// whether it reads it or leaves it out (gui/model/load_events.h): its
// declarations cover the built schema, and a column added to a scratch copy of
// any table it visits is named until the loader decides about it.
#include <QtTest>

#include <string>
#include <vector>

#include "gui/model/load_events.h"
#include "tests/trace_formats/store/scratch_schema.h"
#include "trace_formats/schema/schema.h"
#include "trace_formats/store/coverage.h"

using namespace gpuscope;

class LoadEventsTest : public QObject {
  Q_OBJECT
 private slots:
  void coversTheBuiltSchema() {
    const std::vector<store::TableUse> uses = store::events::uses<gui::EventLoad>("viewer");
    QCOMPARE(uses.size(), size_t{10});
    QCOMPARE(store::uncovered(schema::tables(), uses), std::vector<std::string>{});
  }
  void aColumnAddedToAnyVisitedTableIsNamed() {
    const std::vector<store::TableUse> uses = store::events::uses<gui::EventLoad>("viewer");
    for (const store::TableUse& u : uses) {
      testing::ScratchSchema scratch(u.table, "scratch_column");
      QCOMPARE(store::uncovered(scratch.tables, uses),
               std::vector<std::string>{"viewer: " + std::string(u.table) +
                                        ".scratch_column neither handled nor left out"});
    }
  }
};

QTEST_GUILESS_MAIN(LoadEventsTest)
#include "load_events_test.moc"
