#pragma once
// The plain records of an LLM search as the project stores them (tables llm_searches and
// llm_candidates): the search (which group, provider, model, options, whether it finished and why)
// and every candidate it asked for (lineage, round, parent version, prompt, answer, the attempts the
// request took, tokens, cost, how long the answer and the evaluation took, and the outcome), so a
// restart resumes the search and a report shows its history.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/llm/llm_attempt.h"

namespace nova {

struct LlmSearchRecord {
  int64_t id = 0;
  int64_t group_record_id = 0;  // fusion_groups.id
  std::string provider, model;
  nlohmann::json options = nlohmann::json::object();
  std::string state = "running";  // running, finished, stopped, failed
  std::string stop_reason;
  std::string created_at;
};

struct LlmCandidateRecord {
  int64_t id = 0;
  int64_t search_id = 0;
  int lineage = 0, round = 0;  // 1-based
  std::optional<int64_t> parent_version;
  std::optional<int64_t> version_id;  // unset: nothing to store (no answer, no code, a duplicate)
  std::string code_hash;
  std::string prompt, answer, reasoning;
  // llm_error, no_code, duplicate, pending (stored, not evaluated yet), refused, build_failed, wrong,
  // crashed, unmeasured, slower, tie, best (the engine's selection chose it when it was evaluated)
  std::string outcome;
  std::string detail;  // one sentence
  std::vector<LlmAttempt> attempts;
  long long tokens_in = 0, tokens_out = 0;
  double cost_usd = 0;
  double answer_s = 0, evaluation_s = 0;
};

}  // namespace nova
