// `nova llm MODEL.py --group N [--provider P] [--model M] [--lineages N] [--rounds M] [--budget-usd X] ...`:
// the LLM generator (core/llm/llm_search.h) on one fusion group. The project's graph (intake, or
// --graph) and the builtin generator run first where missing: the builtin kernel is the bar. The
// provider comes from the settings file (llm_providers; its API key from the environment variable it
// names). Progress on stderr (--stream also prints the answers as they arrive); then a table of every
// candidate the search asked for and the version the engine selects. A search that a crash, a cancel
// or a missing GPU cut short resumes where it was (--new starts another). Without a GPU the search
// stores its first candidate and stops with exit code 3. The candidates' code runs in the sandbox
// (core/sandbox/), or is refused where it cannot start unless the project allows unsandboxed runs
// (--allow-unsandboxed).
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/llm_cli.h"
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
  LlmCli llm;
  int group = -1;
  std::string graph;
  bool fresh = false;
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

void run(LlmFlags& f) {
  f.llm.resolve();
  SessionOptions options;
  options.python = f.llm.python();
  auto session = f.session.open(options);
  std::cerr << fmt::format("== {}: project {}\n", f.session.model(), session->project_dir().string());
  f.llm.apply_consent(*session);
  prepare(*session, f);
  try {
    LlmSearchReport report = f.llm.run(*session, f.group, f.fresh);
    LlmCli::print_report(report);
    if (report.state == "failed") throw CliError(report.stop_reason, 1);
    if (auto why = LlmCli::unanswered(report)) throw CliError(*why, 1);
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
  f->llm.add_options(*cmd);
  cmd->add_option("--graph", f->graph,
                  "a graph captured elsewhere (nova intake --json) instead of intake here");
  cmd->add_flag("--new", f->fresh, "start a new search even if the group has an unfinished one");
  cmd->callback([f] { run(*f); });
}

}  // namespace nova
