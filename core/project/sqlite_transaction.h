#pragma once
// RAII write transaction (BEGIN IMMEDIATE ... COMMIT) for the project store: rolls back in the
// destructor unless commit() was reached, so an exception never leaves half a write behind.
struct sqlite3;

namespace nova {

class SqliteTransaction {
 public:
  explicit SqliteTransaction(sqlite3* db);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  bool done_ = false;
};

}  // namespace nova
