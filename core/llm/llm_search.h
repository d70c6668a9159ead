#pragma once
// The LLM engineer's search on one fusion group, through the engine (ProjectSession): N lineages of
// serial refinement for M rounds. Each request carries the group's functional PyTorch source with
// shapes and dtypes, the hardware, the builtin candidate's times as the bar and, after the first
// round, a parent candidate with the digest of its evaluation (LlmFeedback). A lineage refines its own
// last candidate while it fails or stays among the best k; otherwise it restarts from one of the best
// k. Every answer is stored before it is evaluated: as a version (origin llm: provider, model, round;
// parent) and as a record with its lineage, prompt, answer, attempts, tokens, cost and outcome
// (LlmSearchStore), so a crash or a restart resumes where the search was. The same code answered twice
// is dropped by its hash. Budgets: rounds, wall time, tokens, money; the search stops early when
// `idle_rounds` rounds in a row brought nothing better. Which version is best is the engine's selection
// policy's choice for the group.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/jobs/cancel_token.h"
#include "core/llm/llm_client.h"
#include "core/llm/llm_records.h"
#include "core/session/project_session.h"

namespace nova {

struct LlmSearchOptions {
  int lineages = 4, rounds = 5;
  int keep_best = 2;    // parents kept for lineages that fall behind
  int idle_rounds = 1;  // rounds in a row without a better candidate before the search stops
  std::optional<double> wall_budget_s;
  std::optional<long long> token_budget;
  std::optional<double> usd_budget;
  // false (no GPU here): the search stores its first candidate and stops with NoGpuError before
  // evaluating it.
  bool can_evaluate = true;
  // The Python that runs kernelguard on each answer before it is stored for evaluation (the workers'
  // interpreter); empty: kernelguard is not run, and each record says so.
  std::string guard_python;
  EvaluateOptions evaluate;
};

void to_json(nlohmann::json& j, const LlmSearchOptions& o);

struct LlmSearchReport {
  int64_t search_id = 0;
  bool resumed = false;
  std::string state;  // finished, stopped (cancelled: resumable), failed
  std::string stop_reason;
  std::vector<LlmCandidateRecord> candidates;  // every request of the search, in order
  std::optional<int64_t> bar_version;          // the builtin candidate
  std::optional<int64_t> chosen;               // the selection policy's choice for the group; unset: eager
  long long tokens = 0;
  double cost_usd = 0;
  double seconds = 0;
  // Where the candidates' code ran: in the sandbox (true), unsandboxed with the project's consent
  // (false); unset when nothing was to run here (no GPU).
  std::optional<bool> sandboxed;
};

class LlmSearch {
 public:
  using Say = std::function<void(const std::string& line)>;
  using OnText = std::function<void(int lineage, int round, const std::string& delta)>;
  // `group_id`: the graph's group id. Throws std::runtime_error when the project has no graph, no such
  // group, or the group was never generated (its record holds the reference the versions belong to).
  LlmSearch(ProjectSession& session, LlmClient& client, int group_id, LlmSearchOptions options, Say say = {},
            OnText on_text = {});
  // Starts a search or, with `resume`, continues the group's unfinished one. Throws NoGpuError (after
  // storing what it did) when options.can_evaluate is false and a candidate is to be evaluated, and
  // SandboxRefused (before asking anything) when the answers' code could run only unsandboxed and the
  // project does not allow that (core/sandbox/sandbox_policy.h).
  LlmSearchReport run(const CancelToken& cancel, bool resume = true);

 private:
  struct State;
  void evaluate_bar(State& s, const CancelToken& cancel);
  void ask(State& s, int lineage, int round, const CancelToken& cancel);
  void evaluate(State& s, LlmCandidateRecord& record, const CancelToken& cancel);
  std::optional<int64_t> chosen() const;
  std::vector<int64_t> best_parents(const State& s) const;
  std::string prompt_for(State& s, int lineage, std::optional<int64_t>& parent) const;
  std::optional<std::string> budget_exhausted(const State& s) const;

  ProjectSession& session_;
  LlmClient& client_;
  int group_id_;
  LlmSearchOptions options_;
  Say say_;
  OnText on_text_;
};

}  // namespace nova
