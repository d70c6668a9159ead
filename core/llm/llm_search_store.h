#pragma once
// Reads and writes an LLM search's records (core/llm/llm_records.h) in a project, through a
// connection of its own (the project is opened first by ProjectStore, which applies the migration that
// adds these tables). Every write is one transaction, durable when the call returns.
#include <filesystem>
#include <optional>
#include <vector>

#include "core/llm/llm_records.h"

struct sqlite3;

namespace nova {

class LlmSearchStore {
 public:
  // Throws ProjectError when the project cannot be opened or lacks the LLM tables.
  explicit LlmSearchStore(const std::filesystem::path& project_folder);
  ~LlmSearchStore();
  LlmSearchStore(const LlmSearchStore&) = delete;
  LlmSearchStore& operator=(const LlmSearchStore&) = delete;

  int64_t create_search(const LlmSearchRecord& search);
  LlmSearchRecord search(int64_t id) const;
  // The newest search of the group still marked running (a crash or a cancel left it), if any.
  std::optional<LlmSearchRecord> unfinished_search(int64_t group_record_id) const;
  std::vector<LlmSearchRecord> searches() const;
  void finish_search(int64_t id, const std::string& state, const std::string& reason);

  int64_t add_candidate(const LlmCandidateRecord& candidate);
  void set_outcome(int64_t candidate_id, const std::string& outcome, const std::string& detail,
                   double evaluation_s);
  std::vector<LlmCandidateRecord> candidates(int64_t search_id) const;  // in the order asked

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace nova
