#include "core/project/project_store.h"

#include <sqlite3.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "core/project/project_error.h"
#include "core/project/project_migration.h"
#include "core/project/sqlite_statement.h"
#include "core/project/sqlite_transaction.h"

namespace nova {
namespace fs = std::filesystem;

namespace {

// Read-only for us: no write permission, a read-only mount, or (for root, whom permissions do not
// stop) no write bit at all, which is how a user marks a folder as not to be touched.
bool read_only(const fs::path& path) {
  if (::access(path.c_str(), W_OK) != 0) return true;
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) return true;
  struct stat st {};
  if (::geteuid() == 0 && ::stat(path.c_str(), &st) == 0 && (st.st_mode & 0222) == 0) return true;
  return false;
}

std::string uri_path(const fs::path& path) {
  std::string out = "file:";
  for (char c : fs::absolute(path).string()) {
    if (c == '?' || c == '#' || c == '%')
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out;
}

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw ProjectError(fmt::format("database error: {}", msg));
  }
}

int stored_schema_version(sqlite3* db) {
  SqliteStatement has(db,
                      "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='schema_migrations'");
  has.step();
  if (has.int64(0) == 0) return 0;
  SqliteStatement max(db, "SELECT coalesce(max(version), 0) FROM schema_migrations");
  max.step();
  return static_cast<int>(max.int64(0));
}

std::string newer_message(const fs::path& file, int version) {
  return fmt::format(
      "{} was written by a newer Nova (schema {}; this build reads up to {}): nothing was changed",
      file.string(), version, ProjectStore::kSchemaVersion);
}

// A readable sentence; SQLite's words (e.g. PRAGMA quick_check's lines) as the detail.
ProjectError corrupt_error(const fs::path& file, const std::string& why) {
  return ProjectError(ProjectError::Kind::damaged,
                      fmt::format("{} is damaged or is not a Nova project: nothing was changed", file.string()),
                      why);
}

// True for a database without a single table: a project whose creation was killed before its
// schema was committed. Opening it completes the creation.
bool holds_no_tables(sqlite3* db) {
  SqliteStatement s(db, "SELECT count(*) FROM sqlite_master");
  s.step();
  return s.int64(0) == 0;
}

// Project files hold the client's code: readable by the user only. Takes group and other permissions
// away from an existing file or folder (a project created before this rule); best effort.
void make_private(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) ::chmod(path.c_str(), st.st_mode & 07700);
}

// Creates `folder` and its missing parents with mode 0700.
void create_private_folder(const fs::path& folder) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = fs::absolute(folder).lexically_normal(); !fs::exists(p, ec); p = p.parent_path()) {
    if (p == p.parent_path()) break;
    missing.push_back(p);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it)
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST)
      throw ProjectError(fmt::format("cannot create the project folder {}: {}", folder.string(),
                                     std::strerror(errno)));
}

// The project file, empty and readable by the user only, before SQLite opens it: its WAL and
// shared-memory files take the main file's permissions.
void create_private_file(const fs::path& folder, const fs::path& file) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    if (errno == EEXIST) throw ProjectError(fmt::format("{} already holds a Nova project", folder.string()));
    throw ProjectError(fmt::format("cannot create {}: {}", file.string(), std::strerror(errno)));
  }
  ::close(fd);
}

// True when the WAL holds frames: then the main file alone is not the database (another process has
// it open, or one was killed before its last checkpoint).
bool wal_has_frames(const fs::path& file) {
  std::error_code ec;
  auto size = fs::file_size(fs::path(file.string() + "-wal"), ec);
  return !ec && size > 32;  // 32 bytes: the WAL header alone
}

// Looks at an existing project file without changing a byte (immutable: no locks, no -shm or -wal
// files): is it an SQLite database and, when the main file is the whole database, is it a Nova
// project and which schema. When the WAL holds frames only the file's header is read: a process
// killed mid-checkpoint leaves a main file that is sound only together with its WAL (reading its
// schema alone said "malformed" about 1 time in 10 in ProjectStoreKill), and a new database's first
// pages may be in the WAL only. Pages are checked later, on the real connection.
void probe(const fs::path& file, bool main_file_is_whole) {
  if (!main_file_is_whole) {
    static constexpr char kMagic[16] = "SQLite format 3";  // and its terminating NUL: 16 bytes
    char header[16] = {};
    std::ifstream in(file, std::ios::binary);
    in.read(header, sizeof header);
    if (in.gcount() == 0) return;  // empty: everything is still in the WAL
    if (in.gcount() != sizeof header || std::memcmp(header, kMagic, sizeof header) != 0)
      throw corrupt_error(file, "file is not a database");
    return;
  }
  sqlite3* db = nullptr;
  std::string uri = uri_path(file) + "?immutable=1";
  int rc = sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  struct Closer {
    sqlite3* db;
    ~Closer() { sqlite3_close_v2(db); }
  } closer{db};
  if (rc != SQLITE_OK) throw corrupt_error(file, sqlite3_errmsg(db));
  int version = 0;
  try {
    version = stored_schema_version(db);
  } catch (const ProjectError&) {
    throw corrupt_error(file, sqlite3_errmsg(db));
  }
  if (version == 0 && !holds_no_tables(db)) throw corrupt_error(file, "it holds no Nova schema");
  if (version > ProjectStore::kSchemaVersion) throw ProjectError(newer_message(file, version));
}

// PRAGMA quick_check on an open connection: "ok", or what is wrong, one problem a line (at most 100).
std::string quick_check(sqlite3* db) {
  sqlite3_stmt* check = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA quick_check(100)", -1, &check, nullptr) != SQLITE_OK)
    return sqlite3_errmsg(db);
  std::string verdict;
  int rc;
  while ((rc = sqlite3_step(check)) == SQLITE_ROW) {
    const unsigned char* line = sqlite3_column_text(check, 0);
    verdict += (verdict.empty() ? "" : "\n") + std::string(line ? reinterpret_cast<const char*>(line) : "");
  }
  if (rc != SQLITE_DONE) verdict += (verdict.empty() ? "" : "\n") + std::string(sqlite3_errmsg(db));
  sqlite3_finalize(check);
  return verdict;
}

sqlite3* open_writable(const fs::path& file, bool create) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(uri_path(file).c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string msg = sqlite3_errmsg(db);
    sqlite3_close_v2(db);
    throw ProjectError(fmt::format("cannot open {}: {}", file.string(), msg));
  }
  try {
    sqlite3_busy_timeout(db, 5000);
    SqliteStatement wal(db, "PRAGMA journal_mode=WAL");
    if (!wal.step() || wal.text(0) != "wal")
      throw ProjectError(fmt::format("{}: the file system does not support WAL journaling", file.string()));
    // FULL: a commit is fsync'ed to the WAL before the call returns, so "saved" survives a power
    // cut and not only a killed process (NORMAL in WAL mode would survive the kill but could lose the
    // last commits on power loss). Writes are user actions and job results, a few per second at
    // most, so the fsync costs nothing noticeable.
    exec(db, "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;");
  } catch (...) {
    sqlite3_close_v2(db);
    throw;
  }
  return db;
}

std::string column_list() {
  return "id, group_id, parent_id, origin_kind, origin_rule, origin_provider, origin_model, origin_round, "
         "source, created_at, build_status, correct, speedup, chosen_for_export, verdict, verdict_sentence, "
         "plan_json, generator_revision, intake_warnings";
}

CandidateVersion version_from_row(const SqliteStatement& s) {
  CandidateVersion v;
  v.id = s.int64(0);
  v.group_id = s.int64(1);
  v.parent_id = s.optional_int64(2);
  v.origin.kind = origin_kind_from_string(s.text(3));
  v.origin.rule = s.text(4);
  v.origin.provider = s.text(5);
  v.origin.model = s.text(6);
  v.origin.round = static_cast<int>(s.int64(7));
  v.source = s.text(8);
  v.created_at = s.text(9);
  v.build_status = build_status_from_string(s.text(10));
  if (auto c = s.optional_int64(11)) v.correct = *c != 0;
  v.speedup = s.optional_real(12);
  v.chosen_for_export = s.int64(13) != 0;
  if (!s.is_null(14)) v.verdict = verdict_kind_from_string(s.text(14));
  v.verdict_sentence = s.text(15);
  v.plan_json = s.text(16);
  v.generator_revision = static_cast<int>(s.int64(17));
  if (auto w = nlohmann::json::parse(s.text(18), nullptr, false); w.is_array())
    for (const auto& text : w)
      if (text.is_string()) v.intake_warnings.push_back(text.get<std::string>());
  return v;
}

}  // namespace

ProjectStore::ProjectStore(fs::path folder, sqlite3* db) : folder_(std::move(folder)), db_(db) {}

ProjectStore::ProjectStore(ProjectStore&& other) noexcept
    : folder_(std::move(other.folder_)), db_(std::exchange(other.db_, nullptr)) {}

ProjectStore& ProjectStore::operator=(ProjectStore&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    folder_ = std::move(other.folder_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

ProjectStore::~ProjectStore() { sqlite3_close_v2(db_); }

ProjectStore ProjectStore::create(const fs::path& folder) {
  fs::path file = folder / kFileName;
  std::error_code ec;
  if (fs::exists(file, ec)) throw ProjectError(fmt::format("{} already holds a Nova project", folder.string()));
  create_private_folder(folder);
  if (read_only(folder))
    throw ProjectError(fmt::format("{}: the folder is read-only: nothing was changed", folder.string()));
  make_private(folder);  // a folder that existed before
  create_private_file(folder, file);
  ProjectStore store(folder, open_writable(file, true));
  store.migrate();
  return store;
}

ProjectStore ProjectStore::open(const fs::path& folder) {
  fs::path file = folder / kFileName;
  if (!fs::is_directory(folder)) throw ProjectError(fmt::format("{} is not a folder", folder.string()));
  if (!fs::exists(file))
    throw ProjectError(fmt::format("{} is not a Nova project: it holds no {}", folder.string(), kFileName));
  if (read_only(folder))
    throw ProjectError(fmt::format("{}: the folder is read-only: nothing was changed", folder.string()));
  if (read_only(file)) throw ProjectError(fmt::format("{} is read-only: nothing was changed", file.string()));
  bool had_frames = wal_has_frames(file);
  probe(file, !had_frames);
  ProjectStore store(folder, open_writable(file, false));
  // Refusing after the real open: closing must not checkpoint a WAL that held frames into the main
  // file (an empty one is removed on close, as if never opened).
  auto refuse = [&](const ProjectError& error) {
    if (had_frames) sqlite3_db_config(store.db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    throw error;
  };
  if (std::string verdict = quick_check(store.db_); verdict != "ok") refuse(corrupt_error(file, verdict));
  int version = stored_schema_version(store.db_);
  if (version == 0 && !holds_no_tables(store.db_)) refuse(corrupt_error(file, "it holds no Nova schema"));
  if (version > kSchemaVersion) refuse(ProjectError(newer_message(file, version)));
  store.migrate();
  for (const fs::path& path : {folder, file, fs::path(file.string() + "-wal"), fs::path(file.string() + "-shm")})
    make_private(path);
  return store;
}

SqliteTransaction ProjectStore::write_transaction() { return SqliteTransaction(db_); }

void ProjectStore::migrate() {
  SqliteTransaction tx(db_);
  exec(
      db_,
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, "
      "applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))");
  // Checked again under the write lock: another process may have migrated since the probe.
  int current = stored_schema_version(db_);
  if (current > kSchemaVersion) throw ProjectError(newer_message(folder_ / kFileName, current));
  for (const auto& m : project_migrations()) {
    if (m.version <= current) continue;
    exec(db_, m.sql);
    SqliteStatement(db_, "INSERT INTO schema_migrations(version, description) VALUES (?, ?)")
        .bind(1, int64_t{m.version})
        .bind(2, m.description)
        .run();
  }
  tx.commit();
}

int ProjectStore::schema_version() const { return stored_schema_version(db_); }

std::string ProjectStore::integrity_check() const {
  SqliteStatement s(db_, "PRAGMA integrity_check");
  std::string out;
  while (s.step()) out += (out.empty() ? "" : "\n") + s.text(0);
  return out;
}

void ProjectStore::set_model(const ModelRecord& model) {
  SqliteTransaction tx(db_);
  SqliteStatement(db_, "INSERT OR REPLACE INTO model(id, path, source, graph_json) VALUES (1, ?, ?, ?)")
      .bind(1, model.path)
      .bind(2, model.source)
      .bind(3, model.graph_json)
      .run();
  tx.commit();
}

std::optional<ModelRecord> ProjectStore::model() const {
  SqliteStatement s(db_, "SELECT path, source, graph_json FROM model WHERE id = 1");
  if (!s.step()) return std::nullopt;
  return ModelRecord{s.text(0), s.text(1), s.text(2)};
}

int64_t ProjectStore::add_trace(const TraceRecord& trace) {
  SqliteTransaction tx(db_);
  SqliteStatement(db_, "INSERT INTO traces(kind, path, data) VALUES (?, ?, ?)")
      .bind(1, trace.kind)
      .bind(2, trace.path)
      .bind_blob(3, trace.data)
      .run();
  int64_t id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return id;
}

std::vector<TraceRecord> ProjectStore::traces() const {
  SqliteStatement s(db_, "SELECT id, kind, path, data, created_at FROM traces ORDER BY id");
  std::vector<TraceRecord> out;
  while (s.step()) out.push_back({s.int64(0), s.text(1), s.text(2), s.blob(3), s.text(4)});
  return out;
}

int64_t ProjectStore::add_fusion_group(const FusionGroupRecord& group) {
  SqliteTransaction tx(db_);
  SqliteStatement(db_, "INSERT INTO fusion_groups(name, ops_json, generator_revision) VALUES (?, ?, ?)")
      .bind(1, group.name)
      .bind(2, group.ops_json)
      .bind(3, int64_t{group.generator_revision})
      .run();
  int64_t id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return id;
}

std::vector<FusionGroupRecord> ProjectStore::fusion_groups() const {
  SqliteStatement s(db_, "SELECT id, name, ops_json, generator_revision FROM fusion_groups ORDER BY id");
  std::vector<FusionGroupRecord> out;
  while (s.step()) out.push_back({s.int64(0), s.text(1), s.text(2), static_cast<int>(s.int64(3))});
  return out;
}

void ProjectStore::set_generator_revision(int64_t group_id, int revision) {
  SqliteTransaction tx(db_);
  SqliteStatement(db_, "UPDATE fusion_groups SET generator_revision = ? WHERE id = ?")
      .bind(1, int64_t{revision})
      .bind(2, group_id)
      .run();
  if (sqlite3_changes(db_) == 0) throw ProjectError(fmt::format("fusion group {} does not exist", group_id));
  tx.commit();
}

int64_t ProjectStore::add_version(const CandidateVersion& v) {
  SqliteTransaction tx(db_);
  if (v.parent_id) {
    // A parent must exist and belong to the same group, so the version tree stays a tree per group.
    SqliteStatement p(db_, "SELECT group_id FROM candidate_versions WHERE id = ?");
    p.bind(1, *v.parent_id);
    if (!p.step()) throw ProjectError(fmt::format("parent version {} does not exist", *v.parent_id));
    if (p.int64(0) != v.group_id)
      throw ProjectError(fmt::format("parent version {} belongs to another fusion group", *v.parent_id));
  }
  SqliteStatement(
      db_,
      "INSERT INTO candidate_versions(group_id, parent_id, origin_kind, origin_rule, origin_provider, "
      "origin_model, origin_round, source, plan_json, generator_revision, intake_warnings) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, v.group_id)
      .bind(2, v.parent_id)
      .bind(3, to_string(v.origin.kind))
      .bind(4, v.origin.rule)
      .bind(5, v.origin.provider)
      .bind(6, v.origin.model)
      .bind(7, int64_t{v.origin.round})
      .bind(8, v.source)
      .bind(9, v.plan_json)
      .bind(10, int64_t{v.generator_revision})
      .bind(11, nlohmann::json(v.intake_warnings).dump())
      .run();
  int64_t id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return id;
}

int64_t ProjectStore::add_user_edit(int64_t parent_id, const std::string& source) {
  CandidateVersion parent = version(parent_id);
  CandidateVersion edit;
  edit.group_id = parent.group_id;
  edit.parent_id = parent_id;
  edit.origin.kind = OriginKind::user_edit;
  edit.source = source;
  edit.plan_json = parent.plan_json;  // an edit of the source runs as its parent did
  edit.intake_warnings = parent.intake_warnings;
  return add_version(edit);
}

CandidateVersion ProjectStore::version(int64_t id) const { return read_version(id); }

CandidateVersion ProjectStore::read_version(int64_t id) const {
  SqliteStatement s(db_, "SELECT " + column_list() + " FROM candidate_versions WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) throw ProjectError(fmt::format("version {} does not exist", id));
  return version_from_row(s);
}

std::vector<CandidateVersion> ProjectStore::versions(int64_t group_id) const {
  SqliteStatement s(db_,
                    "SELECT " + column_list() + " FROM candidate_versions WHERE group_id = ? ORDER BY id");
  s.bind(1, group_id);
  std::vector<CandidateVersion> out;
  while (s.step()) out.push_back(version_from_row(s));
  return out;
}

std::vector<CandidateVersion> ProjectStore::all_versions() const {
  SqliteStatement s(db_, "SELECT " + column_list() + " FROM candidate_versions ORDER BY id");
  std::vector<CandidateVersion> out;
  while (s.step()) out.push_back(version_from_row(s));
  return out;
}

int64_t ProjectStore::add_build_log(const BuildLogRecord& log) {
  SqliteTransaction tx(db_);
  SqliteStatement(db_, "INSERT INTO build_logs(version_id, tool, ok, log) VALUES (?, ?, ?, ?)")
      .bind(1, log.version_id)
      .bind(2, log.tool)
      .bind(3, int64_t{log.ok ? 1 : 0})
      .bind(4, log.log)
      .run();
  int64_t id = sqlite3_last_insert_rowid(db_);
  SqliteStatement(db_, "UPDATE candidate_versions SET build_status = ? WHERE id = ?")
      .bind(1, to_string(log.ok ? BuildStatus::built : BuildStatus::failed))
      .bind(2, log.version_id)
      .run();
  tx.commit();
  return id;
}

std::optional<BuildLogRecord> ProjectStore::latest_build_log(int64_t version_id) const {
  SqliteStatement s(db_,
                    "SELECT id, version_id, tool, ok, log, created_at FROM build_logs WHERE version_id = ? "
                    "ORDER BY id DESC LIMIT 1");
  s.bind(1, version_id);
  if (!s.step()) return std::nullopt;
  return BuildLogRecord{s.int64(0), s.int64(1), s.text(2), s.int64(3) != 0, s.text(4), s.text(5)};
}

int64_t ProjectStore::add_result(const ResultRecord& result, std::optional<bool> correct,
                                 std::optional<double> speedup,
                                 const std::optional<BenchmarkVerdict>& verdict) {
  SqliteTransaction tx(db_);
  SqliteStatement(db_, "INSERT INTO results(version_id, kind, json) VALUES (?, ?, ?)")
      .bind(1, result.version_id)
      .bind(2, result.kind)
      .bind(3, result.json)
      .run();
  int64_t id = sqlite3_last_insert_rowid(db_);
  if (correct)
    SqliteStatement(db_,
                    "UPDATE candidate_versions SET correct = ?1, chosen_for_export = chosen_for_export AND ?1 "
                    "WHERE id = ?2")
        .bind(1, int64_t{*correct ? 1 : 0})
        .bind(2, result.version_id)
        .run();
  if (speedup)
    SqliteStatement(db_, "UPDATE candidate_versions SET speedup = ? WHERE id = ?")
        .bind(1, *speedup)
        .bind(2, result.version_id)
        .run();
  if (verdict)
    SqliteStatement(db_,
                    "UPDATE candidate_versions SET verdict = ?1, verdict_sentence = ?2, "
                    "chosen_for_export = chosen_for_export AND ?1 NOT IN ('declined', 'tie') WHERE id = ?3")
        .bind(1, to_string(verdict->kind))
        .bind(2, verdict->sentence)
        .bind(3, result.version_id)
        .run();
  tx.commit();
  return id;
}

std::vector<ResultRecord> ProjectStore::results(int64_t version_id) const {
  SqliteStatement s(
      db_, "SELECT id, version_id, kind, json, created_at FROM results WHERE version_id = ? ORDER BY id");
  s.bind(1, version_id);
  std::vector<ResultRecord> out;
  while (s.step()) out.push_back({s.int64(0), s.int64(1), s.text(2), s.text(3), s.text(4)});
  return out;
}

void ProjectStore::choose_for_export(int64_t version_id) {
  SqliteTransaction tx(db_);
  CandidateVersion v = read_version(version_id);
  if (std::string why = v.export_refusal(); !why.empty()) throw ProjectError(why);
  SqliteStatement(db_, "UPDATE candidate_versions SET chosen_for_export = (id = ?) WHERE group_id = ?")
      .bind(1, version_id)
      .bind(2, v.group_id)
      .run();
  tx.commit();
}

std::vector<CandidateVersion> ProjectStore::export_choices() const {
  SqliteStatement s(db_, "SELECT " + column_list() +
                             " FROM candidate_versions WHERE chosen_for_export = 1 AND "
                             "coalesce(verdict, '') NOT IN ('declined', 'tie') AND coalesce(correct, 1) = 1 "
                             "ORDER BY group_id");
  std::vector<CandidateVersion> out;
  while (s.step()) out.push_back(version_from_row(s));
  return out;
}

int64_t ProjectStore::add_export(const ExportRecord& record) {
  SqliteTransaction tx(db_);
  SqliteStatement(db_, "INSERT INTO exports(version_id, path) VALUES (?, ?)")
      .bind(1, record.version_id)
      .bind(2, record.path)
      .run();
  int64_t id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return id;
}

std::vector<ExportRecord> ProjectStore::exports() const {
  SqliteStatement s(db_, "SELECT id, version_id, path, created_at FROM exports ORDER BY id");
  std::vector<ExportRecord> out;
  while (s.step()) out.push_back({s.int64(0), s.int64(1), s.text(2), s.text(3)});
  return out;
}

int64_t ProjectStore::add_model_check(const ModelCheckRecord& record) {
  SqliteTransaction tx(db_);
  SqliteStatement(db_, "INSERT INTO model_checks(package, package_path, passed, json) VALUES (?, ?, ?, ?)")
      .bind(1, record.package)
      .bind(2, record.package_path)
      .bind(3, static_cast<int64_t>(record.passed ? 1 : 0))
      .bind(4, record.json)
      .run();
  int64_t id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return id;
}

std::vector<ModelCheckRecord> ProjectStore::model_checks() const {
  SqliteStatement s(db_, "SELECT id, package, package_path, passed, json, created_at FROM model_checks ORDER BY id");
  std::vector<ModelCheckRecord> out;
  while (s.step()) out.push_back({s.int64(0), s.text(1), s.text(2), s.int64(3) != 0, s.text(4), s.text(5)});
  return out;
}

}  // namespace nova
