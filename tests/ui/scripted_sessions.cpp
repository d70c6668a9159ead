#include "scripted_sessions.h"

#include <fstream>
#include <thread>

#include "core/jobs/worker_run_error.h"
#include "support/graph_fixtures.h"
#include "support/recorded_results.h"
#include "support/test_paths.h"

namespace nova::test {

namespace {
nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("missing fixture " + p.string());
  return nlohmann::json::parse(in);
}
}  // namespace

ScriptedSessions::ScriptedSessions(ScriptedRunner::Script script, QString gpuMissing)
    : script_(std::move(script)), gpuMissing_(std::move(gpuMissing)) {}

ui::SessionBackend ScriptedSessions::backend() {
  ui::SessionBackend b;
  b.factory = [this](SessionOptions options) {
    options.python = python;  // never started as a worker: the runner is scripted
    if (!bwrap.empty()) options.bwrap = bwrap;
    auto runner = std::make_unique<ScriptedRunner>(script_, options.model.filename().string(),
                                                   [this](ScriptedRunner::Command c) {
                                                     std::lock_guard lock(mutex_);
                                                     commands_.push_back(std::move(c));
                                                   });
    return std::make_unique<ProjectSession>(std::move(options), std::move(runner));
  };
  b.gpu = [this] { return gpuMissing_; };
  return b;
}

std::vector<ScriptedRunner::Command> ScriptedSessions::commands() const {
  std::lock_guard lock(mutex_);
  return commands_;
}

int ScriptedSessions::count(const std::string& cmd) const {
  int n = 0;
  for (const auto& c : commands()) n += c.cmd == cmd;
  return n;
}

nlohmann::json ScriptedSessions::recordedIntake(const std::string& model) {
  return graph_fixture(std::filesystem::path(model).stem().string());
}

nlohmann::json ScriptedSessions::recordedValidation(bool passed) { return recorded_validation(passed); }

nlohmann::json ScriptedSessions::recordedBenchmark(const std::string& fixture) {
  return read_json(fixtures_dir() / "bench" / fixture);
}

nlohmann::json ScriptedSessions::recordedBenchmark() {
  return read_json(fixtures_dir() / "bench" / "conv2d_min_add_multiply_g0.h200.json");
}

nlohmann::json ScriptedSessions::waitForCancel(const WorkerCall& call, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!call.cancel.cancelled() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  throw WorkerRunError(WorkerRunError::Kind::Cancelled, "cancelled while " + call.doing);
}

}  // namespace nova::test
