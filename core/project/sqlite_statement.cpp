#include "core/project/sqlite_statement.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include "core/project/project_error.h"

namespace nova {

SqliteStatement::SqliteStatement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK)
    throw ProjectError(fmt::format("database error: {} (in \"{}\")", sqlite3_errmsg(db), sql));
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

static void check_bind(sqlite3* db, int rc) {
  if (rc != SQLITE_OK) throw ProjectError(fmt::format("database error: {}", sqlite3_errmsg(db)));
}

SqliteStatement& SqliteStatement::bind(int index, int64_t value) {
  check_bind(db_, sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, double value) {
  check_bind(db_, sqlite3_bind_double(stmt_, index, value));
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, std::string_view text) {
  check_bind(db_,
             sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT));
  return *this;
}

SqliteStatement& SqliteStatement::bind_blob(int index, const std::vector<uint8_t>& data) {
  check_bind(db_,
             sqlite3_bind_blob(stmt_, index, data.data(), static_cast<int>(data.size()), SQLITE_TRANSIENT));
  return *this;
}

SqliteStatement& SqliteStatement::bind_null(int index) {
  check_bind(db_, sqlite3_bind_null(stmt_, index));
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, const std::optional<int64_t>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

SqliteStatement& SqliteStatement::bind(int index, const std::optional<double>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

bool SqliteStatement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw ProjectError(fmt::format("database error: {}", sqlite3_errmsg(db_)));
}

void SqliteStatement::run() {
  while (step()) {
  }
}

bool SqliteStatement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
int64_t SqliteStatement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double SqliteStatement::real(int column) const { return sqlite3_column_double(stmt_, column); }

std::string SqliteStatement::text(int column) const {
  auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))) : std::string();
}

std::vector<uint8_t> SqliteStatement::blob(int column) const {
  auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, column));
  return p ? std::vector<uint8_t>(p, p + sqlite3_column_bytes(stmt_, column)) : std::vector<uint8_t>();
}

std::optional<int64_t> SqliteStatement::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

std::optional<double> SqliteStatement::optional_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}

}  // namespace nova
