#pragma once
// What `nova validate` and `nova bench` share: their common options, turning them into an
// EvaluationRequest (which reference, which path), the checks that need no GPU (files, the group,
// the candidate against the group, the static checks, the NVRTC build), and only then the GPU check
// that ends either command with a plain sentence and exit code 3 on a machine without a GPU. Also
// the console progress every command that runs a worker shows on stderr.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/env/private_temp_dir.h"
#include "core/jobs/job.h"
#include "core/session/session_options.h"
#include "core/verify/candidate_evaluator.h"

namespace CLI {
class App;
}

namespace nova {

// The options and checks of `nova validate` and `nova bench` (see above).
class EvaluationCli {
 public:
  using Progress = std::function<void(const std::string& message, std::optional<double> fraction)>;

  // Adds MODEL, --group, --candidate, --version, --project, --reference, --seed, --json, --out,
  // --timeout to `cmd`.
  void add_options(CLI::App& cmd);
  // --version N: a version stored in the model's project, evaluated through the project session
  // (its result is stored there) instead of a candidate file.
  const std::optional<std::int64_t>& version() const { return version_; }
  // Evaluates --version through the project: the version must exist (exit 2), a benchmark needs a
  // passed validation (exit 2), a GPU must be there (exit 3); progress on stderr unless --json. The
  // GPU job's info; a job that did not succeed is exit 1. `configure` sets the command's options.
  JobInfo run_stored(EvaluateOptions::Steps steps, const std::function<void(EvaluateOptions&)>& configure);
  // The request for these options. Throws CliError: exit 2 for bad input (a missing or malformed
  // file, a group the graph lacks, a candidate for another group or other inputs); on a machine
  // without a GPU, 1 for a candidate that is refused or does not compile and otherwise 3, after
  // every other check (with a GPU the evaluation runs those two checks and reports them). A captured
  // graph's group source is written to a private folder that lives as long as this object.
  EvaluationRequest request();
  bool json() const { return json_; }
  const std::string& out() const { return out_; }
  double timeout_s() const { return timeout_s_; }
  // A WorkerCall with this budget; progress goes to stderr unless `quiet`.
  static WorkerCall console_call(double timeout_s, bool quiet);
  // Progress lines on stderr ("[ 40%] capturing the graph").
  static Progress console_progress();

 private:
  // The graph's fusion group `group_` (exit 2 if it has none), its source written privately.
  void take_group_from_graph(EvaluationRequest& r);
  // A candidate JSON written for another group than --group: exit 2.
  void check_group_id(const EvaluationRequest& r) const;
  // The static checks and the NVRTC build, which need no GPU (exit 1 when they fail).
  void check_candidate(const EvaluationRequest& r) const;
  // Without a GPU, a full-path source is built with nvcc (in a worker) so its compile errors are said here.
  void build_extension(const EvaluationRequest& r) const;

  std::string model_, candidate_, reference_, out_, project_;
  std::optional<int> group_;
  std::optional<std::int64_t> version_;
  int seed_ = 1234;
  double timeout_s_ = 600;
  bool json_ = false;
  std::optional<PrivateTempDir> reference_dir_;
};

}  // namespace nova
