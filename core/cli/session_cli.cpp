#include "core/cli/session_cli.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_error.h"

namespace nova {
namespace fs = std::filesystem;

void SessionCli::add_options(CLI::App& cmd, const std::string& model_help) {
  cmd.add_option("model", model_, model_help)->required();
  cmd.add_option("--project", project_,
                 "the project folder (default: the studio's project for this model, under "
                 "~/.local/share/nova/projects; $NOVA_PROJECTS moves that)");
}

void SessionCli::add_store_options(CLI::App& cmd, std::string& project, bool& no_project) {
  auto* p = cmd.add_option("--project", project,
                           "store the result in this project folder (default: the studio's project for "
                           "this model, under ~/.local/share/nova/projects; $NOVA_PROJECTS moves that)");
  cmd.add_flag("--no-project", no_project, "store nothing in a project")->excludes(p);
}

std::unique_ptr<ProjectSession> SessionCli::open(const std::string& model, const std::string& project,
                                                 SessionOptions options) {
  std::error_code ec;
  if (fs::is_directory(model, ec)) throw CliError(fmt::format("{} is a directory, not a model file", model), 2);
  if (!fs::is_regular_file(model, ec)) throw CliError(fmt::format("no such model file: {}", model), 2);
  options.model = model;
  options.project = project;
  try {
    return std::make_unique<ProjectSession>(std::move(options));
  } catch (const std::exception& e) {
    throw CliError(fmt::format("cannot open the project: {}", e.what()), 2);
  }
}

}  // namespace nova
