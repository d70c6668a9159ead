// `nova llm MODEL.py --group N [--provider P] [--model M] [--lineages N] [--rounds M] [--budget-usd X] ...`:
// the LLM generator (core/llm/llm_search.h) on one fusion group. The project's graph (intake, or
// --graph) and the builtin generator run first where missing: the builtin kernel is the bar. The
// provider comes from the settings file (llm_providers; its API key from the environment variable it
// names). Progress on stderr (--stream also prints the answers as they arrive); then a table of every
// candidate the search asked for and the version the engine selects. A search that a crash, a cancel
// or a missing GPU cut short resumes where it was (--new starts another). Without a GPU the search
// stores its first candidate and stops with exit code 3.
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/session_cli.h"
#include "core/doctor/doctor_report.h"
#include "core/env/input_file.h"
#include "core/env/settings.h"
#include "core/llm/llm_search.h"
#include "core/session/stored_generation.h"
#include "core/worker/no_gpu_error.h"

namespace nova {
namespace {

struct LlmFlags {
  SessionCli session;
  int group = -1;
  std::string provider, model, graph;
  LlmSearchOptions search;
  double budget_usd = 0, budget_s = 0;
  long long budget_tokens = 0;
  bool fresh = false, stream = false;
};

// Runs a session job to its end; its error as a CliError (1) when it did not succeed.
JobInfo finish(ProjectSession& session, int job, const std::string& what) {
  JobInfo info = session.wait(job);
  if (info.state != JobState::Succeeded)
    throw CliError(fmt::format("{} {}: {}", what, to_string(info.state), info.error), 1);
  return info;
}

// The project's graph and the group's builtin generation, where missing.
void prepare(ProjectSession& session, const LlmFlags& f) {
  if (!f.graph.empty()) {
    try {
      session.import_graph(InputFile::read_json_as<ModelGraph>(f.graph, "graph", "a Nova model graph"));
    } catch (const std::invalid_argument& e) {
      throw CliError(e.what(), 2);
    }
  } else if (!session.graph() || !session.model_unchanged()) {
    std::cerr << "intake: capturing the model's graph\n";
    finish(session, session.intake(), "intake");
  }
  auto graph = session.graph();
  if (!graph) throw CliError("the project holds no graph of the model", 1);
  const FusionGroup* group = nullptr;
  for (const auto& g : graph->groups)
    if (g.id == f.group) group = &g;
  if (!group) {
    std::string ids;
    for (const auto& g : graph->groups) ids += (ids.empty() ? "" : ", ") + std::to_string(g.id);
    throw CliError(
        fmt::format("--group {}: the model has no such fusion group (its groups: {})", f.group, ids), 2);
  }
  if (!find_stored_group(stored_groups(session.store()), *group)) {
    std::cerr << "generate: the builtin generator writes the bar\n";
    finish(session, session.generate(), "generation");
  }
}

void print_report(const LlmSearchReport& r) {
  std::cout << fmt::format("LLM search {}{}: {} ({})\n", r.search_id, r.resumed ? " (resumed)" : "", r.state,
                           r.stop_reason);
  std::cout << fmt::format("{:>5} {:>7} {:>7} {:>13} {:>8} {:>9} {:>8} {:>8}  {}\n", "round", "lineage",
                           "version", "outcome", "attempts", "tokens", "cost $", "seconds", "detail");
  for (const auto& c : r.candidates)
    std::cout << fmt::format("{:>5} {:>7} {:>7} {:>13} {:>8} {:>9} {:>8.4f} {:>8.1f}  {}\n", c.round,
                             c.lineage, c.version_id ? fmt::format("v{}", *c.version_id) : "-", c.outcome,
                             c.attempts.size(), c.tokens_in + c.tokens_out, c.cost_usd,
                             c.answer_s + c.evaluation_s, c.detail);
  std::cout << fmt::format("{} tokens, ${:.4f}, {:.1f} s; bar: {}; selected: {}\n", r.tokens, r.cost_usd,
                           r.seconds, r.bar_version ? fmt::format("v{} (builtin)", *r.bar_version) : "eager",
                           r.chosen ? fmt::format("v{}", *r.chosen) : "eager (nothing beat it)");
}

void run(LlmFlags& f) {
  Settings settings;
  try {
    settings = Settings::load();
  } catch (const std::exception& e) {
    throw CliError(e.what(), 2);
  }
  const std::string name = f.provider.empty() ? settings.llm_default_provider : f.provider;
  if (name.empty())
    throw CliError(
        fmt::format("no LLM provider: pass --provider or set llm_default_provider in {} (llm_providers "
                    "lists name, protocol, base_url, model, max_tokens, temperature, usd_per_mtok_in/out "
                    "and api_key_env)",
                    Settings::default_path().string()),
        2);
  LlmProvider provider;
  std::string key;
  try {
    provider = find_llm_provider(settings.llm_providers, name);
    if (!f.model.empty()) provider.model = f.model;
    key = provider.api_key().value_or("");
  } catch (const std::runtime_error& e) {
    throw CliError(e.what(), 2);
  }
  if (f.budget_usd > 0) f.search.usd_budget = f.budget_usd;
  if (f.budget_s > 0) f.search.wall_budget_s = f.budget_s;
  if (f.budget_tokens > 0) f.search.token_budget = f.budget_tokens;
  DoctorReport gpu;
  probe_cuda_driver(gpu);
  f.search.can_evaluate = gpu.has_gpu();
  f.search.guard_python = settings.resolved_python();

  SessionOptions options;
  options.python = settings.resolved_python();
  auto session = f.session.open(options);
  std::cerr << fmt::format("== {}: project {}\n", f.session.model(), session->project_dir().string());
  prepare(*session, f);
  LlmClient client(provider, key);
  int streaming = -1;
  LlmSearch search(
      *session, client, f.group, f.search, [](const std::string& line) { std::cerr << line << "\n"; },
      [&](int lineage, int round, const std::string& delta) {
        if (!f.stream) return;
        if (streaming != lineage * 1000 + round) {
          streaming = lineage * 1000 + round;
          std::cerr << fmt::format("\n--- round {} lineage {} answer ---\n", round, lineage);
        }
        std::cerr << delta << std::flush;
      });
  try {
    LlmSearchReport report = search.run(CancelToken(), !f.fresh);
    print_report(report);
    if (report.state == "failed") throw CliError(report.stop_reason, 1);
  } catch (const NoGpuError& e) {
    throw CliError(e.what(), 3);
  } catch (const std::invalid_argument& e) {
    throw CliError(e.what(), 2);
  } catch (const CliError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw CliError(e.what(), 1);
  }
}

}  // namespace

void add_llm_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("llm",
                         "the LLM generator on one fusion group: lineages of refinement from feedback "
                         "(compile errors, correctness, "
                         "times), each candidate validated and benchmarked; the builtin kernel is the bar");
  auto f = std::make_shared<LlmFlags>();
  f->session.add_options(*cmd, "the model file (KernelBench or functional form)");
  cmd->add_option("--group", f->group, "the fusion group's id (nova status lists them)")->required();
  cmd->add_option("--provider", f->provider,
                  "a provider of llm_providers in the settings (default: llm_default_provider)");
  cmd->add_option("--model", f->model, "the provider's model instead of the one in the settings");
  cmd->add_option("--lineages", f->search.lineages, "lineages of serial refinement")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--rounds", f->search.rounds, "rounds per lineage")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--keep-best", f->search.keep_best, "parents kept for lineages that fall behind")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--idle-rounds", f->search.idle_rounds,
                  "stop after this many rounds in a row bring nothing better")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--budget-usd", f->budget_usd,
                  "stop once the answers cost this much (from the provider's prices)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--budget-tokens", f->budget_tokens, "stop once this many tokens went in and out")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--budget-s", f->budget_s, "stop after this many seconds of wall time")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--graph", f->graph,
                  "a graph captured elsewhere (nova intake --json) instead of intake here");
  cmd->add_flag("--new", f->fresh, "start a new search even if the group has an unfinished one");
  cmd->add_flag("--stream", f->stream, "print the answers to stderr as they arrive");
  cmd->callback([f] { run(*f); });
}

}  // namespace nova
