#include "core/cli/llm_cli.h"

#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_error.h"
#include "core/doctor/doctor_report.h"
#include "core/env/settings.h"
#include "core/sandbox/unsandboxed_consent.h"

namespace nova {

void LlmCli::add_options(CLI::App& cmd, CLI::Option* needs) {
  const std::size_t before = cmd.get_options().size();
  cmd.add_option("--provider", provider_name_,
                 "a provider of llm_providers in the settings (default: llm_default_provider)");
  cmd.add_option("--model", model_, "the provider's model instead of the one in the settings");
  cmd.add_option("--lineages", search_.lineages, "lineages of serial refinement")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--rounds", search_.rounds, "rounds per lineage")->capture_default_str()->check(CLI::PositiveNumber);
  cmd.add_option("--keep-best", search_.keep_best, "parents kept for lineages that fall behind")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--idle-rounds", search_.idle_rounds, "stop after this many rounds in a row bring nothing better")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--budget-usd", budget_usd_, "stop once the answers cost this much (from the provider's prices)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--budget-tokens", budget_tokens_, "stop once this many tokens went in and out")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--budget-s", budget_s_, "stop after this many seconds of wall time")->check(CLI::NonNegativeNumber);
  cmd.add_flag("--stream", stream_, "print the answers to stderr as they arrive");
  auto* allow = cmd.add_flag("--allow-unsandboxed", allow_unsandboxed_,
                             "allow this project's LLM-written code to run without the sandbox where bubblewrap "
                             "cannot start (stored in the project; its results then say sandboxed: false)");
  cmd.add_flag("--require-sandbox", require_sandbox_,
               "withdraw that consent: LLM-written code runs only in the sandbox (the default)")
      ->excludes(allow);
  if (needs)
    for (std::size_t i = before; i < cmd.get_options().size(); ++i) cmd.get_options()[i]->needs(needs);
}

void LlmCli::resolve() {
  Settings settings;
  try {
    settings = Settings::load();
  } catch (const std::exception& e) {
    throw CliError(e.what(), 2);
  }
  const std::string name = provider_name_.empty() ? settings.llm_default_provider : provider_name_;
  if (name.empty())
    throw CliError(fmt::format("no LLM provider: pass --provider or set llm_default_provider in {} (llm_providers "
                               "lists name, protocol, base_url, model, max_tokens, temperature, usd_per_mtok_in/out "
                               "and api_key_env)",
                               Settings::default_path().string()),
                   2);
  try {
    provider_ = find_llm_provider(settings.llm_providers, name);
    if (!model_.empty()) provider_.model = model_;
    key_ = provider_.api_key().value_or("");
  } catch (const std::runtime_error& e) {
    throw CliError(e.what(), 2);
  }
  DoctorReport gpu;
  probe_cuda_driver(gpu);
  search_.can_evaluate = gpu.has_gpu();
  search_.guard_python = settings.resolved_python();
}

void LlmCli::apply_consent(const ProjectSession& session) const {
  if (!allow_unsandboxed_ && !require_sandbox_) return;
  UnsandboxedConsent::set(session.project_dir(), allow_unsandboxed_);
  std::cerr << (allow_unsandboxed_
                    ? "this project now allows LLM-written code to run unsandboxed where the sandbox cannot start "
                      "(such results say sandboxed: false; --require-sandbox withdraws it)\n"
                    : "this project now runs LLM-written code only in the sandbox\n");
}

std::optional<std::string> LlmCli::budget_spent() const {
  if (budget_usd_ > 0 && spent_usd_ >= budget_usd_)
    return fmt::format("the budget of ${:.4f} is spent (${:.4f})", budget_usd_, spent_usd_);
  if (budget_tokens_ > 0 && spent_tokens_ >= budget_tokens_)
    return fmt::format("the budget of {} tokens is spent ({})", budget_tokens_, spent_tokens_);
  if (budget_s_ > 0 && spent_s_ >= budget_s_)
    return fmt::format("the budget of {:.0f} s is spent ({:.0f} s)", budget_s_, spent_s_);
  return std::nullopt;
}

LlmSearchReport LlmCli::run(ProjectSession& session, int group, bool fresh) {
  LlmSearchOptions options = search_;
  if (budget_usd_ > 0) options.usd_budget = budget_usd_ - spent_usd_;
  if (budget_tokens_ > 0) options.token_budget = budget_tokens_ - spent_tokens_;
  if (budget_s_ > 0) options.wall_budget_s = budget_s_ - spent_s_;
  LlmClient client(provider_, key_);
  int streaming = -1;
  LlmSearch search(
      session, client, group, options, [](const std::string& line) { std::cerr << line << "\n"; },
      [&](int lineage, int round, const std::string& delta) {
        if (!stream_) return;
        if (streaming != lineage * 1000 + round) {
          streaming = lineage * 1000 + round;
          std::cerr << fmt::format("\n--- group {} round {} lineage {} answer ---\n", group, round, lineage);
        }
        std::cerr << delta << std::flush;
      });
  LlmSearchReport report = search.run(CancelToken(), !fresh);
  spent_usd_ += report.cost_usd;
  spent_tokens_ += report.tokens;
  spent_s_ += report.seconds;
  return report;
}

void LlmCli::print_report(const LlmSearchReport& r) {
  std::cout << fmt::format("LLM search {}{}: {} ({})\n", r.search_id, r.resumed ? " (resumed)" : "", r.state,
                           r.stop_reason);
  // "answer s": the request, until the answer's last byte; "eval s": from there to validated and benchmarked.
  std::cout << fmt::format("{:>5} {:>7} {:>7} {:>13} {:>8} {:>9} {:>8} {:>8} {:>8}  {}\n", "round", "lineage", "version",
                           "outcome", "attempts", "tokens", "cost $", "answer s", "eval s", "detail");
  for (const auto& c : r.candidates)
    std::cout << fmt::format("{:>5} {:>7} {:>7} {:>13} {:>8} {:>9} {:>8.4f} {:>8.1f} {:>8.1f}  {}\n", c.round, c.lineage,
                             c.version_id ? fmt::format("v{}", *c.version_id) : "-", c.outcome, c.attempts.size(),
                             c.tokens_in + c.tokens_out, c.cost_usd, c.answer_s, c.evaluation_s, c.detail);
  std::cout << fmt::format("{} tokens, ${:.4f}, {:.1f} s; bar: {}; selected: {}\n", r.tokens, r.cost_usd, r.seconds,
                           r.bar_version ? fmt::format("v{} (builtin)", *r.bar_version) : "eager",
                           r.chosen ? fmt::format("v{}", *r.chosen) : "eager (nothing beat it)");
  if (r.sandboxed)
    std::cout << (*r.sandboxed ? "sandboxed: true (the candidates ran in bubblewrap)\n"
                               : "sandboxed: false (the sandbox could not start; the project allows unsandboxed runs)\n");
}

std::optional<std::string> LlmCli::unanswered(const LlmSearchReport& r) {
  if (r.candidates.empty()) return std::nullopt;
  for (const auto& c : r.candidates)
    if (c.outcome != "llm_error") return std::nullopt;
  return fmt::format("no answer from the provider in {} request(s): {}", r.candidates.size(), r.candidates.back().detail);
}

}  // namespace nova
