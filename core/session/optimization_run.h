#pragma once
// The whole workflow on every fusion group of a model, through a ProjectSession: intake (skipped when
// the stored graph was captured from the model's current text), the builtin generator (primaries and
// alternatives), validation of every version side by side, then the benchmark of each version that
// passed, one at a time and alone on its GPU, and the selection policy over what the project then
// holds. What `nova optimize` runs and prints; the studio can run it too.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/select/selection.h"
#include "core/session/project_session.h"

namespace nova {

struct OptimizationOptions {
  bool fresh_intake = false;        // capture the graph again even if the model is unchanged
  std::optional<ModelGraph> graph;  // use this graph instead of intake
  GenerateOptions generate;
  EvaluateOptions evaluate;         // steps are set per phase
  bool remeasure = false;           // evaluate versions that already have results
  bool needs_gpu = true;            // false: stop after generation (no GPU on this machine)
};

// What one run did, for the front end to print.
struct OptimizationReport {
  int evaluated = 0, passed = 0, benchmarked = 0;
  std::vector<std::string> failures;  // "v12: worker crashed: SIGSEGV while ..."
  std::vector<std::string> warnings;  // intake's warnings
  std::vector<GroupEvidence> evidence;
  Selection selection;
  double seconds = 0;
};

class OptimizationRun {
 public:
  // `say`: one line of progress for people (the CLI prints it to stderr).
  using Say = std::function<void(const std::string& line)>;
  OptimizationRun(ProjectSession& session, OptimizationOptions options, Say say = {});
  // Throws std::runtime_error when intake or generation fails (the job's error as the message).
  OptimizationReport run();

 private:
  // What a stored version still needs before the selection can use it.
  enum class Need { nothing, validate, validate_again, bench };
  Need need_of(std::int64_t version) const;
  JobInfo run_job(int id, const std::string& what);
  ProjectSession& session_;
  OptimizationOptions options_;
  Say say_;
};

}  // namespace nova
