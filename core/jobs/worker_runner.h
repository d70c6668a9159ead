#pragma once
// Runs one command of the Python worker ("validate", "bench", ...) and returns its result. The
// abstraction the verify stage is written against: ChildProcessWorkerRunner starts a fresh
// process per command (over the worker protocol, docs/WORKER_PROTOCOL.md); a runner over the
// persistent WorkerClient can replace it without touching callers. Implementations must honour
// the budget and the cancel token (a cancel message, then ending the worker), relay progress, and
// throw WorkerRunError when no result comes back.
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/jobs/cancel_token.h"
#include "core/sandbox/sandbox_spec.h"

namespace nova {

struct WorkerCall {
  std::chrono::milliseconds budget{std::chrono::minutes(10)};
  CancelToken cancel;
  std::function<void(const std::string& message, std::optional<double> fraction)> progress;
  std::function<void(const std::string& line)> log;  // the worker's stderr lines
  std::string doing;                                 // for messages: "validating candidate 3"
  int device = -1;  // the GPU lane's device: the worker sees only it (CUDA_VISIBLE_DEVICES); -1: all
  // Set: the worker runs LLM-written code, in this sandbox (a fresh process in a private work folder).
  std::optional<SandboxSpec> sandbox;
  // Told once, before the command is sent: the seconds this call waited for its worker process to start
  // and say hello (Python and torch imported; about 0 for a standby that was ready).
  std::function<void(double seconds)> started;
};

class WorkerRunner {
 public:
  virtual ~WorkerRunner() = default;
  virtual nlohmann::json run(const std::string& cmd, const nlohmann::json& args, const WorkerCall& call) = 0;
};

}  // namespace nova
