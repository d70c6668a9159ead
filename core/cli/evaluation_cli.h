#pragma once
// What `nova validate` and `nova bench` share: their common options, turning them into an
// EvaluationRequest (which reference, which path), and the GPU check that ends either command
// with a plain sentence and exit code 3 on a machine without a GPU.
#include <memory>
#include <optional>
#include <string>

#include "core/verify/candidate_evaluator.h"

namespace CLI {
class App;
}

namespace nova {

class EvaluationCli {
 public:
  // Adds MODEL, --group, --candidate, --reference, --seed, --json, --out, --budget to `cmd`.
  void add_options(CLI::App& cmd);
  // The request for these options; throws CliError (exit 2) for bad input, (exit 3) without a GPU.
  EvaluationRequest request() const;
  bool json() const { return json_; }
  const std::string& out() const { return out_; }
  int budget_s() const { return budget_s_; }
  // A WorkerCall with this budget; progress goes to stderr unless `quiet`.
  static WorkerCall console_call(int budget_s, bool quiet);

 private:
  std::string model_, candidate_, reference_, out_;
  std::optional<int> group_;
  int seed_ = 1234;
  int budget_s_ = 600;
  bool json_ = false;
};

}  // namespace nova
