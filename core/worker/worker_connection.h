#pragma once
// One worker process speaking the worker protocol (docs/WORKER_PROTOCOL.md), whatever its mode:
// persistent (WorkerClient), one request then exit (ChildProcessWorkerRunner, fresh or standby),
// or the profiling worker with the tracer injected (ProfileRunner). Reads and checks the hello,
// sends requests with ids, relays progress and the worker's stderr, turns error messages into
// typed WorkerErrors, and ends the process on a crash, past the deadline, or when a cancelled
// request does not stop within its grace period.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/worker/child_process.h"
#include "core/worker/worker_error.h"
#include "core/worker/worker_info.h"

namespace nova {

// How one request is run.
struct WorkerRequestOptions {
  using Progress = std::function<void(const std::string& message, std::optional<double> fraction)>;
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  // Polled while the request runs: once true, a cancel message goes out, and the process is ended
  // if no answer comes within cancel_grace.
  std::function<bool()> cancelled;
  std::chrono::milliseconds cancel_grace{std::chrono::seconds(3)};
  Progress progress;
  std::function<void(const std::string& line)> log;  // the worker's stderr, line by line
  std::string doing;                                 // for messages: "validating candidate 3"
  bool doing_follows_progress = false;               // each progress message becomes `doing`
};

class WorkerConnection {
 public:
  // Starts `argv` with exactly `env`. Throws WorkerError(Crashed) when it cannot be started.
  // `package`: where its nova_worker package lies, for messages (a version mismatch names it).
  WorkerConnection(const std::vector<std::string>& argv, const ChildProcess::Env& env, std::string package);
  ~WorkerConnection();
  WorkerConnection(const WorkerConnection&) = delete;
  WorkerConnection& operator=(const WorkerConnection&) = delete;

  // Waits for the hello (once; later calls return it) and checks its protocol version. Throws
  // WorkerError: Protocol (another version, a garbled hello), Crashed (exited before it), Timeout,
  // Cancelled (`cancelled` turned true while waiting; the process is ended).
  const WorkerInfo& await_hello(std::chrono::steady_clock::time_point deadline,
                                const std::function<bool()>& cancelled = {});
  bool has_hello() const { return hello_.has_value(); }

  // Sends a request and returns its result object. Throws WorkerError of the kind the worker
  // reported, or Crashed, Timeout, Cancelled, Protocol; the process is ended unless the worker
  // answered (an answered error or an honoured cancel leave a persistent worker usable).
  nlohmann::json call(const std::string& cmd, const nlohmann::json& args, const WorkerRequestOptions& options);

  bool running() const { return proc_->running() && !proc_->eof(); }
  // How the process ended, once it has (waits up to `timeout` for it).
  std::optional<ExitStatus> wait(std::chrono::milliseconds timeout) { return proc_->wait(timeout); }
  // Asks a persistent worker to exit, then makes sure it did.
  void shutdown(std::chrono::milliseconds wait = std::chrono::seconds(2));
  ExitStatus terminate(std::chrono::milliseconds grace = std::chrono::milliseconds(500));

  const std::string& stderr_text() const { return proc_->stderr_text(); }
  std::string stderr_tail(std::size_t max_bytes = 8192) const;
  const std::string& program() const { return program_; }

 private:
  std::optional<nlohmann::json> next_message(std::chrono::steady_clock::time_point until,
                                             const WorkerRequestOptions* options);
  void relay_stderr(const WorkerRequestOptions* options);
  [[noreturn]] void fail_dead(const std::string& doing);
  [[noreturn]] void fail_timeout(std::chrono::milliseconds timeout, const std::string& doing);

  std::unique_ptr<ChildProcess> proc_;
  std::string program_;
  std::string package_;
  std::optional<WorkerInfo> hello_;
  std::size_t stderr_seen_ = 0;
  int next_id_ = 1;
};

}  // namespace nova
