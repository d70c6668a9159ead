#pragma once
// What `nova llm` and `nova optimize --llm` share: the LLM search's options (provider, model, lineages,
// rounds, budgets, --stream), the provider and its API key from the settings, the project's consent to
// unsandboxed runs (--allow-unsandboxed / --require-sandbox), running the search on one group with its
// progress on stderr, and the table of what it asked for. Budgets given here are the total of every
// search this object runs: each group's search gets what the earlier ones left (spend()).
#include <optional>
#include <string>

#include "core/llm/llm_provider.h"
#include "core/llm/llm_search.h"

namespace CLI {
class App;
class Option;
}

namespace nova {

class LlmCli {
 public:
  // Adds the options to `cmd`; with `needs`, each of them requires that option (optimize's --llm).
  void add_options(CLI::App& cmd, CLI::Option* needs = nullptr);
  // Reads the settings: the provider and its key, the workers' Python, whether a GPU is here.
  // Throws CliError (2) for an unknown provider, a missing key or unreadable settings.
  void resolve();
  // Applies --allow-unsandboxed / --require-sandbox to the session's project, saying so on stderr.
  void apply_consent(const ProjectSession& session) const;
  // The search on one group, resumed where it stopped unless `fresh`. NoGpuError and SandboxRefused
  // pass through; the spend is counted against the budgets (see above).
  LlmSearchReport run(ProjectSession& session, int group, bool fresh);
  // Why no further search may start (a budget is spent), if so.
  std::optional<std::string> budget_spent() const;
  bool can_evaluate() const { return search_.can_evaluate; }
  const std::string& python() const { return search_.guard_python; }  // the workers' (after resolve())
  const LlmProvider& provider() const { return provider_; }

  static void print_report(const LlmSearchReport& report);
  // Why a search is a failure although it finished: every request ended without an answer (the provider
  // unreachable, every retry spent), so nothing was tried. nullopt when some answer arrived.
  static std::optional<std::string> unanswered(const LlmSearchReport& report);

 private:
  std::string provider_name_, model_;
  LlmSearchOptions search_;
  double budget_usd_ = 0, budget_s_ = 0;
  long long budget_tokens_ = 0;
  double spent_usd_ = 0, spent_s_ = 0;
  long long spent_tokens_ = 0;
  bool stream_ = false, allow_unsandboxed_ = false, require_sandbox_ = false;
  LlmProvider provider_;
  std::string key_;
};

}  // namespace nova
