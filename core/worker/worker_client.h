#pragma once
// A persistent Python worker (`python -m nova_worker`) for a sequence of requests: starts it with a
// minimal environment, checks its hello (WorkerConnection), sends one request at a time and waits
// for the result while relaying progress. A worker that crashes, overruns its deadline or ignores
// a cancel is ended and reported as a WorkerError; the next request starts a fresh one. Used by
// IntakeRunner (the CLI and the studio's intake).
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/worker/worker_connection.h"
#include "core/worker/worker_error.h"
#include "core/worker/worker_info.h"
#include "core/worker/worker_protocol.h"

namespace nova {

class WorkerClient {
 public:
  static constexpr int kProtocolVersion = WorkerProtocol::kVersion;
  using Progress = WorkerRequestOptions::Progress;

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

  // Sends a request and returns the result object. Throws WorkerError. `cancelled` is polled while
  // the request runs: once true the worker is asked to stop (Cancelled; it stays usable) and ended
  // if it does not within a few seconds.
  nlohmann::json request(const std::string& cmd, const nlohmann::json& args, std::chrono::milliseconds timeout,
                         const Progress& progress = {}, const std::function<bool()>& cancelled = {});

  // Asks the worker to exit, then makes sure it did.
  void stop();

  // The last few KiB the worker (or the one that just died) wrote to stderr: for the job log.
  std::string stderr_tail(std::size_t max_bytes = 8192) const;
  int workers_started() const { return starts_; }

 private:
  void discard();

  std::string python_;
  std::chrono::milliseconds start_timeout_;
  std::unique_ptr<WorkerConnection> conn_;
  WorkerInfo info_;
  std::string last_stderr_;
  int starts_ = 0;
};

}  // namespace nova
