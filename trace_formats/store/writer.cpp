#include "trace_formats/store/writer.h"

#include "trace_formats/store/reader.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::store {

Writer::Writer(const std::string& path) : db_(path, Connection::Mode::kCreate) {
  db_.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  begin();
  if (db_.has_table("meta")) {
    check_schema_version(db_);
  } else if (db_.query_int("SELECT count(*) FROM sqlite_master").value_or(0) > 0) {
    db_.exec("ROLLBACK");
    in_tx_ = false;
    throw Error(path + ": not a gpuscope recording (an SQLite file without a meta table)");
  }
  db_.exec(schema::ddl());
  meta_default(meta_key::kSchemaVersion, std::to_string(schema::kVersion));
  commit();
  insert_string_ = db_.prepare("INSERT OR IGNORE INTO \"string\"(value) VALUES(?)");
  select_string_ = db_.prepare("SELECT id FROM \"string\" WHERE value=?");
  put_stat_ = db_.prepare("INSERT OR REPLACE INTO collector_stat(pid, key, value) VALUES(?,?,?)");
  for (const schema::Table& t : schema::tables()) {
    TableSlot& slot = tables_.emplace_back();
    slot.table = &t;
    if (t.auto_id) slot.batch = std::make_unique<RowBatch>(db_, t);
  }
}

void Writer::begin() {
  if (in_tx_) return;
  db_.exec("BEGIN IMMEDIATE");
  in_tx_ = true;
}

void Writer::commit() {
  if (!in_tx_) return;
  flush();
  db_.exec("COMMIT");
  in_tx_ = false;
}

void Writer::rollback() {
  for (TableSlot& t : tables_)
    for (RowBatch* b : {t.batch.get(), t.replace.get()})
      if (b) b->discard();
  strings_.clear();
  in_tx_ = false;
  if (!sqlite3_get_autocommit(db_.raw())) db_.exec("ROLLBACK");
}

int64_t Writer::intern(std::string_view text) {
  if (auto it = strings_.find(text); it != strings_.end()) return it->second;
  // Another process may have added it since: the lookup runs inside our transaction.
  insert_string_.bind(1, text);
  insert_string_.run();
  select_string_.bind(1, text);
  if (!select_string_.step()) throw Error(db_.path() + ": string interning failed");
  int64_t id = select_string_.int64(0);
  select_string_.reset();
  strings_.emplace(std::string(text), id);
  return id;
}

std::string Writer::meta_default(std::string_view key, std::string_view value) {
  Statement ins = db_.prepare("INSERT OR IGNORE INTO meta(key, value) VALUES(?, ?)");
  ins.bind(1, key);
  ins.bind(2, value);
  ins.run();
  Statement sel = db_.prepare("SELECT value FROM meta WHERE key=?");
  sel.bind(1, key);
  sel.step();
  return std::string(sel.text(0));
}

void Writer::set_meta(std::string_view key, std::string_view value) {
  Statement st = db_.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)");
  st.bind(1, key);
  st.bind(2, value);
  st.run();
}

void Writer::put_stat(int64_t pid, std::string_view key, int64_t value) {
  put_stat_.bind(1, pid);
  put_stat_.bind(2, key);
  put_stat_.bind(3, value);
  put_stat_.run();
}

size_t Writer::table_index(std::string_view table) {
  const schema::Table* t = schema::find_table(table);
  if (!t) throw Error("no table " + std::string(table) + " in the schema");
  return static_cast<size_t>(t - schema::tables().data());
}

Statement& Writer::insert_statement(TableSlot& t) {
  if (!t.insert.raw()) t.insert = db_.prepare(schema::insert_sql(*t.table), SQLITE_PREPARE_PERSISTENT);
  return t.insert;
}

void Writer::flush() {
  for (TableSlot& t : tables_)
    for (RowBatch* b : {t.batch.get(), t.replace.get()})
      if (b && b->pending_rows() > 0) b->flush();
}

}  // namespace gpuscope::store
