#include "merge/merge.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <unordered_map>

#include "trace_formats/common/atomic_file.h"
#include "trace_formats/common/error.h"
#include "trace_formats/export/progress.h"
#include "merge/inputs.h"
#include "trace_formats/schema/schema.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/writer.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::merge {
namespace {

std::string duration_text(int64_t ns) {
  char buf[64];
  const double a = static_cast<double>(ns < 0 ? -ns : ns);
  if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.6f s", static_cast<double>(ns) / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  else std::snprintf(buf, sizeof buf, "%.1f us", static_cast<double>(ns) / 1e3);
  return buf;
}

// A pid the output already holds gets a fresh number; the others stay.
class PidMap {
 public:
  // `own`: the file's pids (process table), never handed out to another of its pids.
  void start_file(const std::vector<InputProcess>& own) {
    file_.clear();
    own_.clear();
    for (const auto& p : own) own_.insert(p.pid);
  }
  int64_t operator()(int64_t pid) {
    auto it = file_.find(pid);
    if (it != file_.end()) return it->second;
    int64_t out = pid;
    if (taken_.count(pid)) {
      while (taken_.count(next_) || own_.count(next_)) ++next_;
      out = next_++;
    }
    file_.emplace(pid, out);
    return out;
  }
  // Pids of the file just copied: taken for the files after it. Returns its
  // processes that were renumbered (a parent pid outside the file may be too,
  // so that it never names another host's process, but is not reported).
  std::vector<std::pair<int64_t, int64_t>> finish_file() {
    std::vector<std::pair<int64_t, int64_t>> renumbered;
    for (const auto& [from, to] : file_) {
      taken_.insert(to);
      if (from != to && own_.count(from)) renumbered.emplace_back(from, to);
    }
    std::sort(renumbered.begin(), renumbered.end());
    return renumbered;
  }

 private:
  std::unordered_map<int64_t, int64_t> file_;
  std::set<int64_t> taken_, own_;
  int64_t next_ = kFirstRenumberedPid;
};

struct Copier {
  Copier(store::Writer& w, formats::Progress& p) : out(w), progress(p) {}
  store::Writer& out;
  formats::Progress& progress;
  int64_t total_rows = 0, done_rows = 0;
  PidMap pids;

  // Every table but meta, enum and string (interned afresh), its time columns
  // moved by `offset`, string ids and pids renumbered; rows keep their order.
  int64_t copy_file(Input& in, int64_t offset) {
    std::unordered_map<int64_t, int64_t> strings;
    {
      store::Cursor<store::rec::String> st(in.reader->db(), {store::rec::String::kId, store::rec::String::kValue});
      while (st.next()) strings.emplace(st->id, out.intern(st->value));
    }
    pids.start_file(in.processes);
    int64_t rows = 0;
    for (const schema::Table& t : schema::tables()) {
      if (t.name == "meta" || t.name == "enum" || t.name == "string") continue;
      if (!in.reader->db().has_table(t.name)) continue;
      rows += copy_table(in, t, offset, strings);
    }
    return rows;
  }

  int64_t copy_table(Input& in, const schema::Table& t, int64_t offset,
                     const std::unordered_map<int64_t, int64_t>& strings) {
    std::vector<const schema::Column*> cols;
    std::string names;
    for (size_t i = t.auto_id ? 1 : 0; i < t.columns.size(); ++i) {
      cols.push_back(&t.columns[i]);
      // A column newer than the input's schema reads as NULL.
      const bool present = schema::has_column(t.name, t.columns[i].name, in.reader->schema_version());
      names += std::string(names.empty() ? "" : ", ") +
               (present ? "\"" + std::string(t.columns[i].name) + "\"" : std::string("NULL"));
    }
    store::Statement sel = in.reader->query("SELECT " + names + " FROM \"" + std::string(t.name) + "\"");
    // Devices are ordinals per host: the first file's properties stand for an ordinal.
    store::Statement ins = out.connection().prepare(schema::insert_sql(t, t.name == "device"));
    int64_t rows = 0;
    while (sel.step()) {
      for (size_t c = 0; c < cols.size(); ++c) {
        const int idx = static_cast<int>(c) + 1;
        const int col = static_cast<int>(c);
        if (sel.is_null(col)) {
          ins.bind_null(idx);
          continue;
        }
        switch (cols[c]->type) {
          case schema::ColumnType::kTime: ins.bind(idx, sel.int64(col) + offset); break;
          case schema::ColumnType::kPid: ins.bind(idx, pids(sel.int64(col))); break;
          case schema::ColumnType::kStringId: {
            auto it = strings.find(sel.int64(col));
            if (it == strings.end()) ins.bind_null(idx);  // an id the file's string table lacks
            else ins.bind(idx, it->second);
            break;
          }
          default: sqlite3_bind_value(ins.raw(), idx, sqlite3_column_value(sel.raw(), col));
        }
      }
      ins.run();
      ++rows;
      if (++done_rows % 4096 == 0)
        progress.update(static_cast<uint64_t>(done_rows), static_cast<uint64_t>(total_rows), "rows",
                        static_cast<uint64_t>(done_rows));
    }
    return rows;
  }
};

int64_t data_rows(Input& in) {
  int64_t n = 0;
  for (const schema::Table& t : schema::tables())
    if (t.name != "meta" && t.name != "enum" && t.name != "string") n += in.reader->count(t.name);
  return n;
}

void write_meta(store::Writer& w, Input& reference, const std::vector<Input>& inputs, const Result& r) {
  store::Cursor<store::rec::Meta> st(reference.reader->db(), {store::rec::Meta::kKey, store::rec::Meta::kValue});
  // A merged reference's own merge.* keys described its inputs, not these.
  while (st.next())
    if (st->key != meta_key::kSchemaVersion && !st->key.starts_with(meta_key::kMergePrefix))
      w.set_meta(st->key, st->value);
  std::string hosts;
  std::set<std::string> seen;
  for (const Input& in : inputs)
    if (!in.host.empty() && seen.insert(in.host).second) hosts += (hosts.empty() ? "" : ",") + in.host;
  w.set_meta(meta_key::kHost, hosts);
  w.set_meta(meta_key::kMergeFiles, std::to_string(r.files.size()));
  for (size_t i = 0; i < r.files.size(); ++i) {
    const FileReport& f = r.files[i];
    const Alignment& a = f.alignment;
    auto key = [n = static_cast<int>(i)](std::string_view p) { return meta_key::merge_input(n, p); };
    namespace part = meta_key::merge_part;
    w.set_meta(key(part::kFile), f.path);
    w.set_meta(key(part::kHost), inputs[i].host);
    std::string ranks;
    for (int64_t x : inputs[i].ranks()) ranks += (ranks.empty() ? "" : ",") + std::to_string(x);
    w.set_meta(key(part::kRanks), ranks);
    w.set_meta(key(part::kOffsetNs), std::to_string(a.offset_ns));
    w.set_meta(key(part::kAlignedOn), f.reference ? "reference" : source_name(a.source));
    if (!f.reference) {
      w.set_meta(key(part::kResidualNs), std::to_string(a.residual_ns));
      w.set_meta(key(part::kMaxDeviationNs), std::to_string(a.max_deviation_ns));
      w.set_meta(key(part::kCollectives), std::to_string(a.collectives));
    }
    if (!f.renumbered_pids.empty()) {
      std::string m;
      for (const auto& [from, to] : f.renumbered_pids)
        m += (m.empty() ? "" : ",") + std::to_string(from) + ":" + std::to_string(to);
      w.set_meta(key(part::kPids), m);
    }
  }
}

}  // namespace

std::string describe(const FileReport& f) {
  std::string s = f.description + ": ";
  if (f.reference) {
    s += "reference clock";
  } else {
    const Alignment& a = f.alignment;
    s += "offset " + duration_text(a.offset_ns) + ", residual " + duration_text(a.residual_ns) + " (median over " +
         std::to_string(a.collectives) + " collectives, " + source_name(a.source) +
         (a.by_step ? "" : " matched by order") + "; largest " + duration_text(a.max_deviation_ns) + ")";
  }
  if (!f.renumbered_pids.empty()) {
    s += "; pids renumbered";
    for (const auto& [from, to] : f.renumbered_pids) s += " " + std::to_string(from) + "->" + std::to_string(to);
  }
  return s;
}

Result merge_recordings(const std::vector<std::string>& paths, const std::string& output, const Options& options) {
  if (paths.size() < 2)
    throw Error("merge: needs two recordings or more, one per node (got " + std::to_string(paths.size()) + ")");
  if (output == "-") throw Error("merge: -o -: the merged recording is a database file, not a stream");
  check_outputs({output}, paths, options.force);
  std::vector<Input> inputs;
  for (const std::string& p : paths) inputs.push_back(open_input(p));
  check_same_job(inputs);

  Result r;
  std::vector<FileCollectives> coll;
  for (Input& in : inputs) coll.push_back(read_collectives(*in.reader));
  if (coll.front().events == 0)
    throw Error(inputs.front().path +
                ": no collective to align clocks on (no NCCL kernel, ProcessGroup work or c10d op)");
  for (size_t i = 0; i < inputs.size(); ++i) {
    FileReport f;
    f.path = inputs[i].path;
    f.description = inputs[i].describe();
    f.reference = i == 0;
    if (i > 0) {
      auto al = align(coll.front(), coll[i]);
      if (!al)
        throw Error(inputs[i].path + ": no collective in common with " + inputs.front().path +
                    " to align clocks on (" +
                    (coll[i].events == 0 ? std::string("it has none: no NCCL kernel, ProcessGroup work or c10d op")
                                         : std::to_string(coll[i].events) + " collectives, none matching") +
                    ")");
      f.alignment = *al;
    }
    r.ranks += static_cast<int>(inputs[i].ranks().size());
    r.files.push_back(std::move(f));
  }

  AtomicFile file(output, AtomicFile::Kind::kSqlite,
                  options.force ? AtomicFile::Existing::kReplace : AtomicFile::Existing::kRefuse);
  file.close();
  {
    store::Writer w(file.temp_path());
    // A fresh private file renamed into place at the end: no journal needed.
    w.connection().exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;");
    w.begin();
    formats::Progress progress("merging", options.progress);
    Copier copier(w, progress);
    for (Input& in : inputs) copier.total_rows += data_rows(in);
    for (size_t i = 0; i < inputs.size(); ++i) {
      r.files[i].rows = copier.copy_file(inputs[i], r.files[i].alignment.offset_ns);
      r.files[i].renumbered_pids = copier.pids.finish_file();
      r.rows += r.files[i].rows;
    }
    progress.done();
    write_meta(w, inputs.front(), inputs, r);
    if (!options.gpuscope_version.empty()) w.set_meta(meta_key::kMergeGpuscopeVersion, options.gpuscope_version);
    w.commit();
  }
  std::error_code ec;
  auto remove_side_files = [&] {
    for (const char* suffix : {"-wal", "-shm", "-journal"}) std::filesystem::remove(output + suffix, ec);
  };
  if (options.force) remove_side_files();  // else untouched until the name is ours
  file.commit();
  if (!options.force) remove_side_files();
  return r;
}

}  // namespace gpuscope::merge
