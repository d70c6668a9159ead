#pragma once
// What every `nova` command that works on a project shares: the --project option (default: the
// studio's project for the model, so what `nova` measures on a GPU server opens in the studio) and
// opening a ProjectSession for a model with a clear error (exit code 2) when the model or the
// project cannot be used.
#include <memory>
#include <string>

#include "core/session/project_session.h"

namespace CLI {
class App;
}

namespace nova {

class SessionCli {
 public:
  // Adds MODEL (positional) and --project DIR to `cmd`.
  void add_options(CLI::App& cmd, const std::string& model_help);
  // Opens the session; throws CliError (2) for a missing model or a project that cannot be opened.
  std::unique_ptr<ProjectSession> open(SessionOptions options) const { return open(model_, project_, std::move(options)); }
  static std::unique_ptr<ProjectSession> open(const std::string& model, const std::string& project,
                                              SessionOptions options);
  const std::string& model() const { return model_; }
  const std::string& project() const { return project_; }

  // For commands that also work without a project (intake, generate): --project DIR and
  // --no-project on `cmd` (the model is the command's own positional). Their results are stored in
  // the project unless --no-project.
  static void add_store_options(CLI::App& cmd, std::string& project, bool& no_project);

 private:
  std::string model_, project_;
};

}  // namespace nova
