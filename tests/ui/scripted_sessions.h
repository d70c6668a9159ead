#pragma once
// Sessions for UI tests that never start Python: ProjectSessions over a scripted WorkerRunner, as
// tests/core/project_session_test.cpp builds them, handed to the studio through its SessionBackend.
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/jobs/worker_runner.h"
#include "ui/shell/session_backend.h"

namespace nova::test {

// A WorkerRunner that answers from a script instead of starting a worker, and records every command
// with the model of the session it belongs to.
class ScriptedRunner : public WorkerRunner {
 public:
  using Script = std::function<nlohmann::json(const std::string& model, const std::string& cmd,
                                              const nlohmann::json& args, const WorkerCall& call)>;
  struct Command {
    std::string model, cmd;
  };
  ScriptedRunner(Script script, std::string model, std::function<void(Command)> record)
      : script_(std::move(script)), model_(std::move(model)), record_(std::move(record)) {}
  nlohmann::json run(const std::string& cmd, const nlohmann::json& args, const WorkerCall& call) override {
    record_({model_, cmd});
    return script_(model_, cmd, args, call);
  }

 private:
  Script script_;
  std::string model_;
  std::function<void(Command)> record_;
};

// The studio's sessions for one test: each opened model gets a ProjectSession over a ScriptedRunner
// running `script` (the model's file name, the command, its arguments). `gpuMissing`: what the
// studio's GPU check answers (empty: a GPU is there, so validation and profiling run their jobs).
class ScriptedSessions {
 public:
  explicit ScriptedSessions(ScriptedRunner::Script script, QString gpuMissing = {});
  ui::SessionBackend backend();  // the studio must not outlive this object
  // Set: the sessions' bubblewrap (a path that does not exist: the sandbox cannot start).
  std::string bwrap;
  // The sessions' Python: never started as a worker (the runner is scripted), but the Export job checks
  // the model file with it, so export tests give one with torch.
  std::string python = "python3";
  std::vector<ScriptedRunner::Command> commands() const;
  int count(const std::string& cmd) const;

  // Answers for scripts: the model's graph recorded on the H200 (tests/fixtures/graphs/STEM.json),
  // a recorded validation (passed or as it failed) and benchmark of the seed model's group 0.
  static nlohmann::json recordedIntake(const std::string& model);
  static nlohmann::json recordedValidation(bool passed);
  static nlohmann::json recordedBenchmark();
  // Another recorded benchmark of tests/fixtures/bench, by file name.
  static nlohmann::json recordedBenchmark(const std::string& fixture);
  // Blocks like a worker until the call is cancelled (or `limit` passes), then ends as a cancelled
  // worker does.
  static nlohmann::json waitForCancel(const WorkerCall& call, std::chrono::milliseconds limit);

 private:
  ScriptedRunner::Script script_;
  QString gpuMissing_;
  mutable std::mutex mutex_;
  std::vector<ScriptedRunner::Command> commands_;
};

}  // namespace nova::test
