#pragma once
// One step of the project schema: its version number, what it does, and the SQL that takes a
// database from version-1 to version. The store applies the pending ones in order, in one
// transaction, and records each in the schema_migrations table.
#include <string>
#include <vector>

namespace nova {

struct ProjectMigration {
  int version = 0;
  std::string description;
  std::string sql;
};

// All migrations, ordered by version (1, 2, ...). The last one is ProjectStore::kSchemaVersion.
const std::vector<ProjectMigration>& project_migrations();

}  // namespace nova
