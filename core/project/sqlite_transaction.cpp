#include "core/project/sqlite_transaction.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include "core/project/project_error.h"

namespace nova {

SqliteTransaction::SqliteTransaction(sqlite3* db) : db_(db), nested_(sqlite3_get_autocommit(db) == 0) {
  // IMMEDIATE takes the write lock now, so a busy database fails here and not halfway through.
  const char* begin = nested_ ? "SAVEPOINT nova_nested" : "BEGIN IMMEDIATE";
  if (sqlite3_exec(db_, begin, nullptr, nullptr, nullptr) != SQLITE_OK)
    throw ProjectError(fmt::format("cannot start a write: {}", sqlite3_errmsg(db_)));
}

SqliteTransaction::~SqliteTransaction() {
  if (done_) return;
  // A savepoint is undone and then released, leaving the outer transaction as it was before it.
  const char* undo = nested_ ? "ROLLBACK TO nova_nested; RELEASE nova_nested" : "ROLLBACK";
  sqlite3_exec(db_, undo, nullptr, nullptr, nullptr);
}

void SqliteTransaction::commit() {
  if (sqlite3_exec(db_, nested_ ? "RELEASE nova_nested" : "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
    throw ProjectError(fmt::format("cannot save: {}", sqlite3_errmsg(db_)));
  done_ = true;
}

}  // namespace nova
