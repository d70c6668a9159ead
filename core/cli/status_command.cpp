// `nova status MODEL.py [--project DIR] [--json]`: what the project holds (the graph, each group's
// versions with their build, validation and benchmark verdicts) and which version each group ships
// by the selection policy, with the whole model's figures. Reads only; needs no GPU.
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/selection_table.h"
#include "core/cli/session_cli.h"
#include "core/select/selection_policy.h"
#include "core/session/project_evidence.h"

namespace nova {

void add_status_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "status", "a project's versions, results and which version each group ships (no GPU needed)");
  struct Flags {
    SessionCli session;
    bool json = false;
  };
  auto f = std::make_shared<Flags>();
  f->session.add_options(*cmd, "the model file the project belongs to");
  cmd->add_flag("--json", f->json, "print the selection as JSON");
  cmd->callback([f] {
    SessionOptions options;
    options.gpus = 1;
    options.cpu_threads = 1;
    auto session = f->session.open(options);
    auto graph = session->graph();
    if (!graph)
      throw CliError(fmt::format("the project at {} holds no graph yet: run `nova intake` or `nova optimize` first",
                                 session->project_dir().string()),
                     2);
    auto evidence = ProjectEvidence::read(session->store(), *graph);
    Selection selection = SelectionPolicy::select(evidence);
    const std::vector<ModelCheckResult> checks = session->model_checks();
    if (f->json) {
      std::cout << nlohmann::json{{"project", session->project_dir().string()},
                                  {"selection", selection},
                                  {"model_checks", checks}}
                       .dump(2)
                << "\n";
      return;
    }
    std::cout << fmt::format("project: {}\nmodel: {} ({} nodes, {} fusion groups, captured by {}){}\n",
                             session->project_dir().string(), f->session.model(), graph->nodes.size(),
                             graph->groups.size(), graph->capture_route,
                             session->model_unchanged() ? "" : "; the model file changed since: run intake again");
    for (const auto& w : graph->warnings) std::cout << "warning: " << w << "\n";
    std::cout << "\n"
              << SelectionTable::format(std::filesystem::path(f->session.model()).filename().string(), evidence,
                                        selection);
    // LLM-written versions that ran without the sandbox (the project allowed it where bwrap could not start).
    std::string unsandboxed;
    for (const auto& g : evidence)
      for (const auto& v : g.versions)
        if (v.validation && v.validation->environment.is_object() &&
            v.validation->environment.value("sandboxed", true) == false)
          unsandboxed += fmt::format("{}v{}", unsandboxed.empty() ? "" : ", ", v.version_id);
    if (!unsandboxed.empty())
      std::cout << "sandboxed: false for the LLM-written " << unsandboxed
                << " (run without the sandbox, as this project allows)\n";
    // The whole model, as measured by `nova check-package`: the latest check of each package.
    std::map<std::string, const ModelCheckResult*> latest;
    for (const auto& c : checks) latest[c.package] = &c;
    for (const auto& [name, c] : latest) {
      const ModelRatio* cold = c->ratio("cold", "optimized", "eager");
      const ModelRatio* wall = c->ratio("wall", "optimized", "eager");
      auto text = [](const ModelRatio* r) { return r ? r->text() : std::string("-"); };
      std::cout << fmt::format("whole model with {} (nova check-package): {}; vs eager cold {}, wall {}\n", name,
                               c->passed ? "validated" : "FAILED validation", text(cold), text(wall));
    }
    if (latest.empty()) std::cout << "whole model: not measured (nova export, then nova check-package)\n";
  });
}

}  // namespace nova
