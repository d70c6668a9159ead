#pragma once
// The core side of a Python worker (`python -m nova_worker`): starts it with a minimal
// environment, checks its hello line, sends one request at a time and waits for the result while
// relaying progress. A worker that crashes or overruns its deadline is ended and reported as a
// WorkerError; the next request starts a fresh one. Used by IntakeRunner now, and by the profile,
// validate and bench stages later.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/worker/child_process.h"
#include "core/worker/worker_error.h"
#include "core/worker/worker_info.h"

namespace nova {

class WorkerClient {
 public:
  static constexpr int kProtocolVersion = 1;
  using Progress = std::function<void(const std::string& message, std::optional<double> fraction)>;

  // `python`: the interpreter to run the worker with (empty: default_python()).
  explicit WorkerClient(std::string python = {},
                        std::chrono::milliseconds start_timeout = std::chrono::seconds(90));
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Starts the worker if none is running and returns its hello facts. Throws WorkerError
  // (Protocol for a version mismatch or a garbled hello, Crashed if it dies on the way).
  const WorkerInfo& start();
  bool running() const;
  // Facts of the current (or last) worker; empty before the first start.
  const WorkerInfo& info() const { return info_; }

  // Sends {"id","cmd","args"} and returns the result object. Throws WorkerError.
  nlohmann::json request(const std::string& cmd, const nlohmann::json& args,
                         std::chrono::milliseconds timeout, const Progress& progress = {});

  // Asks the worker to exit, then makes sure it did.
  void stop();

  // The last few KiB the worker (or the one that just died) wrote to stderr: for the job log.
  std::string stderr_tail(std::size_t max_bytes = 8192) const;
  int workers_started() const { return starts_; }

 private:
  [[noreturn]] void fail_dead(const std::string& doing);
  [[noreturn]] void fail_timeout(std::chrono::milliseconds timeout, const std::string& doing);
  void discard();
  std::optional<nlohmann::json> next_message(std::chrono::steady_clock::time_point deadline);

  std::string python_;
  std::chrono::milliseconds start_timeout_;
  std::unique_ptr<ChildProcess> proc_;
  WorkerInfo info_;
  std::string last_stderr_;
  int next_id_ = 1;
  int starts_ = 0;
};

}  // namespace nova
