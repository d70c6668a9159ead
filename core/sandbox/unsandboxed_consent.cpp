#include "core/sandbox/unsandboxed_consent.h"

#include <sqlite3.h>

#include <memory>

#include <fmt/format.h>

#include "core/project/project_error.h"
#include "core/project/project_store.h"
#include "core/project/sqlite_statement.h"

namespace nova {
namespace {
constexpr const char* kKey = "llm.allow_unsandboxed";

std::unique_ptr<sqlite3, int (*)(sqlite3*)> open_project(const std::filesystem::path& folder) {
  const auto file = folder / ProjectStore::kFileName;
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close_v2);
  if (rc != SQLITE_OK)
    throw ProjectError(fmt::format("cannot open {}: {}", file.string(), raw ? sqlite3_errmsg(raw) : "out of memory"));
  sqlite3_busy_timeout(db.get(), 10000);
  SqliteStatement has(db.get(), "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'project_settings'");
  if (!has.step() || has.int64(0) == 0)
    throw ProjectError(
        fmt::format("{} has no settings table: open it with this version of nova first", file.string()));
  return db;
}
}  // namespace

bool UnsandboxedConsent::allowed(const std::filesystem::path& folder) {
  auto db = open_project(folder);
  SqliteStatement s(db.get(), "SELECT value FROM project_settings WHERE key = ?");
  s.bind(1, kKey);
  return s.step() && s.text(0) == "true";
}

void UnsandboxedConsent::set(const std::filesystem::path& folder, bool allowed) {
  auto db = open_project(folder);
  SqliteStatement(db.get(),
                  "INSERT INTO project_settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                  "value = excluded.value, set_at = excluded.set_at")
      .bind(1, kKey)
      .bind(2, allowed ? "true" : "false")
      .run();
}

}  // namespace nova
