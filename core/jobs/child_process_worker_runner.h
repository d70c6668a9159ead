#pragma once
// A WorkerRunner that starts `python -m nova_worker.<cmd> ARGS.json` for each command: the
// worker prints progress lines and then its result as JSON on stdout. A fresh process per command
// means a crashed or wedged candidate never affects the next job; the watchdog here ends the
// process past its budget or on cancel.
#include <filesystem>
#include <string>
#include <vector>

#include "core/jobs/worker_runner.h"

namespace nova {

class ChildProcessWorkerRunner : public WorkerRunner {
 public:
  // `python` empty: Settings' resolved interpreter. `work_dir` holds the argument files.
  explicit ChildProcessWorkerRunner(std::string python = {}, std::filesystem::path work_dir = {});
  nlohmann::json run(const std::string& cmd, const nlohmann::json& args, const WorkerCall& call) override;

  // The module run for `cmd` (overridable for tests that need a worker that sleeps or crashes).
  void set_module_prefix(std::string prefix) { module_prefix_ = std::move(prefix); }
  // A folder put on the worker's PYTHONPATH before the worker package (tests' own modules).
  void add_python_path(std::filesystem::path dir) { extra_paths_.push_back(std::move(dir)); }

 private:
  std::string python_;
  std::filesystem::path work_dir_;
  std::string module_prefix_ = "nova_worker.";
  std::vector<std::filesystem::path> extra_paths_;
};

}  // namespace nova
