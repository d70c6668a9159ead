#include "core/llm/llm_search_store.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include "core/project/project_error.h"
#include "core/project/project_store.h"
#include "core/project/sqlite_statement.h"
#include "core/project/sqlite_transaction.h"

namespace nova {
namespace {

LlmSearchRecord read_search(SqliteStatement& s) {
  LlmSearchRecord r;
  r.id = s.int64(0);
  r.group_record_id = s.int64(1);
  r.provider = s.text(2);
  r.model = s.text(3);
  r.options = nlohmann::json::parse(s.text(4), nullptr, false);
  r.state = s.text(5);
  r.stop_reason = s.text(6);
  r.created_at = s.text(7);
  return r;
}

constexpr const char* kSearchColumns =
    "SELECT id, group_id, provider, model, options_json, state, stop_reason, created_at FROM llm_searches ";

}  // namespace

LlmSearchStore::LlmSearchStore(const std::filesystem::path& folder) {
  const auto file = folder / ProjectStore::kFileName;
  if (sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw ProjectError(fmt::format("cannot open {}: {}", file.string(), msg));
  }
  sqlite3_busy_timeout(db_, 10000);
  char* err = nullptr;
  sqlite3_exec(db_, "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;", nullptr, nullptr, &err);
  sqlite3_free(err);
  SqliteStatement has(db_,
                      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'llm_candidates'");
  if (!has.step() || has.int64(0) == 0) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw ProjectError(
        fmt::format("{} has no LLM search tables: open it with this version of nova first", file.string()));
  }
}

LlmSearchStore::~LlmSearchStore() {
  if (db_) sqlite3_close_v2(db_);
}

int64_t LlmSearchStore::create_search(const LlmSearchRecord& r) {
  SqliteTransaction tx(db_);
  SqliteStatement(db_,
                  "INSERT INTO llm_searches(group_id, provider, model, options_json) VALUES (?, ?, ?, ?)")
      .bind(1, r.group_record_id)
      .bind(2, r.provider)
      .bind(3, r.model)
      .bind(4, r.options.dump())
      .run();
  const int64_t id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return id;
}

LlmSearchRecord LlmSearchStore::search(int64_t id) const {
  SqliteStatement s(db_, std::string(kSearchColumns) + "WHERE id = ?");
  s.bind(1, id);
  if (!s.step()) throw ProjectError(fmt::format("no LLM search {} in the project", id));
  return read_search(s);
}

std::optional<LlmSearchRecord> LlmSearchStore::unfinished_search(int64_t group_record_id) const {
  SqliteStatement s(
      db_, std::string(kSearchColumns) + "WHERE group_id = ? AND state = 'running' ORDER BY id DESC LIMIT 1");
  s.bind(1, group_record_id);
  if (!s.step()) return std::nullopt;
  return read_search(s);
}

std::vector<LlmSearchRecord> LlmSearchStore::searches() const {
  SqliteStatement s(db_, std::string(kSearchColumns) + "ORDER BY id");
  std::vector<LlmSearchRecord> out;
  while (s.step()) out.push_back(read_search(s));
  return out;
}

void LlmSearchStore::finish_search(int64_t id, const std::string& state, const std::string& reason) {
  SqliteTransaction tx(db_);
  SqliteStatement(db_, "UPDATE llm_searches SET state = ?, stop_reason = ? WHERE id = ?")
      .bind(1, state)
      .bind(2, reason)
      .bind(3, id)
      .run();
  tx.commit();
}

int64_t LlmSearchStore::add_candidate(const LlmCandidateRecord& c) {
  SqliteTransaction tx(db_);
  SqliteStatement(
      db_,
      "INSERT INTO llm_candidates(search_id, lineage, round, parent_version, version_id, code_hash, prompt, "
      "answer, reasoning, outcome, detail, attempts_json, tokens_in, tokens_out, cost_usd, answer_s, "
      "evaluation_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, c.search_id)
      .bind(2, int64_t{c.lineage})
      .bind(3, int64_t{c.round})
      .bind(4, c.parent_version)
      .bind(5, c.version_id)
      .bind(6, c.code_hash)
      .bind(7, c.prompt)
      .bind(8, c.answer)
      .bind(9, c.reasoning)
      .bind(10, c.outcome)
      .bind(11, c.detail)
      .bind(12, nlohmann::json(c.attempts).dump())
      .bind(13, int64_t{c.tokens_in})
      .bind(14, int64_t{c.tokens_out})
      .bind(15, c.cost_usd)
      .bind(16, c.answer_s)
      .bind(17, c.evaluation_s)
      .run();
  const int64_t id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return id;
}

void LlmSearchStore::set_outcome(int64_t candidate_id, const std::string& outcome, const std::string& detail,
                                 double evaluation_s) {
  SqliteTransaction tx(db_);
  SqliteStatement(db_, "UPDATE llm_candidates SET outcome = ?, detail = ?, evaluation_s = ? WHERE id = ?")
      .bind(1, outcome)
      .bind(2, detail)
      .bind(3, evaluation_s)
      .bind(4, candidate_id)
      .run();
  tx.commit();
}

std::vector<LlmCandidateRecord> LlmSearchStore::candidates(int64_t search_id) const {
  SqliteStatement s(
      db_,
      "SELECT id, search_id, lineage, round, parent_version, version_id, code_hash, prompt, answer, "
      "reasoning, outcome, detail, attempts_json, tokens_in, tokens_out, cost_usd, answer_s, evaluation_s "
      "FROM llm_candidates WHERE search_id = ? ORDER BY id");
  s.bind(1, search_id);
  std::vector<LlmCandidateRecord> out;
  while (s.step()) {
    LlmCandidateRecord c;
    c.id = s.int64(0);
    c.search_id = s.int64(1);
    c.lineage = static_cast<int>(s.int64(2));
    c.round = static_cast<int>(s.int64(3));
    c.parent_version = s.optional_int64(4);
    c.version_id = s.optional_int64(5);
    c.code_hash = s.text(6);
    c.prompt = s.text(7);
    c.answer = s.text(8);
    c.reasoning = s.text(9);
    c.outcome = s.text(10);
    c.detail = s.text(11);
    auto attempts = nlohmann::json::parse(s.text(12), nullptr, false);
    if (attempts.is_array()) c.attempts = attempts.get<std::vector<LlmAttempt>>();
    c.tokens_in = s.int64(13);
    c.tokens_out = s.int64(14);
    c.cost_usd = s.real(15);
    c.answer_s = s.real(16);
    c.evaluation_s = s.real(17);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace nova
