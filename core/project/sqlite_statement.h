#pragma once
// RAII wrapper of one prepared SQLite statement, used by the project store. Binds by 1-based index,
// steps, reads columns, and finalizes on destruction. Errors become ProjectError with SQLite's text.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace nova {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, std::string_view sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& bind(int index, int64_t value);
  SqliteStatement& bind(int index, double value);
  SqliteStatement& bind(int index, std::string_view text);
  SqliteStatement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  SqliteStatement& bind_blob(int index, const std::vector<uint8_t>& data);
  SqliteStatement& bind_null(int index);
  SqliteStatement& bind(int index, const std::optional<int64_t>& value);
  SqliteStatement& bind(int index, const std::optional<double>& value);

  // Advances; true while a row is available. Throws on error.
  bool step();
  // Steps a statement that returns no rows.
  void run();

  bool is_null(int column) const;
  int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  std::vector<uint8_t> blob(int column) const;
  std::optional<int64_t> optional_int64(int column) const;
  std::optional<double> optional_real(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace nova
