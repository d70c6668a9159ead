#pragma once
// RAII write transaction (BEGIN IMMEDIATE ... COMMIT) for the project store: rolls back in the
// destructor unless commit() was reached, so an exception never leaves half a write behind.
// Inside an open transaction it is a savepoint instead: its commit() keeps its writes as part of the
// outer transaction (durable only when that one commits), its rollback undoes only its own. So each
// ProjectStore write is a transaction of its own, or a part of a larger one
// (ProjectStore::write_transaction, e.g. one whole generation) with no second set of methods.
struct sqlite3;

namespace nova {

class SqliteTransaction {
 public:
  explicit SqliteTransaction(sqlite3* db);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  void commit();
  bool nested() const { return nested_; }

 private:
  sqlite3* db_;
  bool nested_ = false;
  bool done_ = false;
};

}  // namespace nova
