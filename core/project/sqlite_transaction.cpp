#include "core/project/sqlite_transaction.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include "core/project/project_error.h"

namespace nova {

SqliteTransaction::SqliteTransaction(sqlite3* db) : db_(db) {
  // IMMEDIATE takes the write lock now, so a busy database fails here and not halfway through.
  if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK)
    throw ProjectError(fmt::format("cannot start a write: {}", sqlite3_errmsg(db_)));
}

SqliteTransaction::~SqliteTransaction() {
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqliteTransaction::commit() {
  if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
    throw ProjectError(fmt::format("cannot save: {}", sqlite3_errmsg(db_)));
  done_ = true;
}

}  // namespace nova
