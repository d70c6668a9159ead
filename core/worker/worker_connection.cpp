#include "core/worker/worker_connection.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/worker/worker_protocol.h"

namespace nova {
using namespace std::chrono;
using nlohmann::json;

namespace {

// "SIGSEGV" for a signal death, "exit code 1" otherwise.
std::string death_cause(const std::optional<ExitStatus>& st) {
  if (!st) return "no exit status";
  if (st->signal) {
    const char* abbrev = sigabbrev_np(st->signal);
    return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", st->signal);
  }
  return st->describe();
}

// The last non-empty line of the worker's stderr: usually the exception it died of.
std::string last_line(const std::string& s) {
  auto end = s.find_last_not_of("\n ");
  if (end == std::string::npos) return {};
  auto start = s.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return s.substr(start, end - start + 1);
}

// How often a running request looks at its cancel predicate.
constexpr milliseconds kPoll{100};

}  // namespace

WorkerConnection::WorkerConnection(const std::vector<std::string>& argv, const ChildProcess::Env& env,
                                   std::string package)
    : proc_(std::make_unique<ChildProcess>()),
      program_(argv.empty() ? std::string() : argv.front()),
      package_(std::move(package)) {
  try {
    proc_->start(argv, env);
  } catch (const std::exception& e) {
    throw WorkerError(WorkerError::Kind::Crashed, fmt::format("cannot start the worker: {}", e.what()));
  }
}

WorkerConnection::~WorkerConnection() {
  if (proc_->running()) proc_->terminate(milliseconds(200));
}

std::string WorkerConnection::stderr_tail(std::size_t max_bytes) const {
  const std::string& text = proc_->stderr_text();
  return text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
}

ExitStatus WorkerConnection::terminate(milliseconds grace) { return proc_->terminate(grace); }

void WorkerConnection::relay_stderr(const WorkerRequestOptions* options) {
  if (!options || !options->log) return;
  for (const auto& line : proc_->new_stderr_lines()) options->log(line);
}

std::optional<json> WorkerConnection::next_message(steady_clock::time_point until,
                                                   const WorkerRequestOptions* options) {
  for (;;) {
    auto left = duration_cast<milliseconds>(until - steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    std::optional<std::string> line;
    try {
      line = proc_->read_line(left);
    } catch (const std::runtime_error& e) {  // a line past the size limit: the child was ended
      throw WorkerError(WorkerError::Kind::Protocol, fmt::format("the worker broke the protocol: {}", e.what()));
    }
    relay_stderr(options);
    if (!line) return std::nullopt;
    json msg = json::parse(*line, nullptr, false);
    if (!msg.is_discarded() && msg.is_object()) return msg;
    // The worker routes user prints to stderr, so this is a stray native write: log, go on.
    if (options && options->log)
      options->log(*line);
    else
      spdlog::warn("worker wrote a non-protocol line to stdout: {}", line->substr(0, 200));
  }
}

void WorkerConnection::fail_dead(const std::string& doing) {
  auto st = proc_->wait(seconds(3));
  if (!st) st = proc_->terminate(milliseconds(200));
  if (st->signal) throw WorkerError(WorkerError::Kind::Crashed, fmt::format("worker crashed: {} while {}",
                                                                            death_cause(st), doing));
  std::string why = last_line(proc_->stderr_text());
  throw WorkerError(WorkerError::Kind::Crashed,
                    fmt::format("worker exited ({}) without an answer while {}{}", death_cause(st), doing,
                                why.empty() ? "" : ": " + why));
}

void WorkerConnection::fail_timeout(milliseconds timeout, const std::string& doing) {
  proc_->terminate(milliseconds(500));
  throw WorkerError(WorkerError::Kind::Timeout,
                    fmt::format("worker timed out after {:g} s while {}; it was stopped",
                                duration<double>(timeout).count(), doing));
}

const WorkerInfo& WorkerConnection::await_hello(steady_clock::time_point deadline,
                                                const std::function<bool()>& cancelled) {
  if (hello_) return *hello_;
  const auto started = steady_clock::now();
  std::optional<json> hello;
  for (;;) {
    if (cancelled && cancelled()) {
      proc_->terminate(milliseconds(200));
      throw WorkerError(WorkerError::Kind::Cancelled, "cancelled while the worker was starting");
    }
    hello = next_message(std::min(deadline, steady_clock::now() + kPoll), nullptr);
    if (hello || proc_->eof() || steady_clock::now() >= deadline) break;
  }
  if (!hello) {
    if (proc_->eof()) {
      std::string tail = stderr_tail(2000);
      auto st = proc_->wait(seconds(3));
      if (!st) st = proc_->terminate(milliseconds(200));
      throw WorkerError(WorkerError::Kind::Crashed,
                        fmt::format("worker exited ({}) before its hello line; is '{}' a Python with the "
                                    "nova_worker package on its path?\n{}",
                                    death_cause(st), program_, tail));
    }
    fail_timeout(duration_cast<milliseconds>(deadline - started), "starting up");
  }
  try {
    hello_ = WorkerProtocol::check_hello(*hello, package_);
  } catch (const WorkerError&) {
    proc_->terminate(milliseconds(200));
    throw;
  }
  spdlog::debug("worker {} started ({}): python {} torch {}", hello_->pid, hello_->mode, hello_->python,
                hello_->torch);
  return *hello_;
}

json WorkerConnection::call(const std::string& cmd, const json& args, const WorkerRequestOptions& o) {
  std::string doing = o.doing.empty() ? fmt::format("running '{}'", cmd) : o.doing;
  if (!hello_) throw std::logic_error("WorkerConnection::call before await_hello");
  const int id = next_id_++;
  if (!proc_->write_stdin(WorkerProtocol::request(id, cmd, args).dump() + "\n")) fail_dead(doing);
  const auto deadline = steady_clock::now() + o.timeout;
  std::optional<steady_clock::time_point> kill_at;  // set once the cancel went out
  for (;;) {
    if (!kill_at && o.cancelled && o.cancelled()) {
      kill_at = steady_clock::now() + o.cancel_grace;
      if (!proc_->write_stdin(WorkerProtocol::cancel(id).dump() + "\n")) kill_at = steady_clock::now();
    }
    auto until = std::min(deadline, steady_clock::now() + kPoll);
    if (kill_at) until = std::min(until, *kill_at);
    auto msg = next_message(until, &o);
    if (!msg) {
      if (proc_->eof()) {
        if (kill_at) break;  // it died on the way out: cancelled all the same
        fail_dead(doing);
      }
      if (kill_at && steady_clock::now() >= *kill_at) break;
      if (steady_clock::now() >= deadline) fail_timeout(o.timeout, doing);
      continue;
    }
    if (msg->value("id", json()) != json(id)) {
      spdlog::warn("worker message for another request ignored: {}", msg->dump().substr(0, 200));
      continue;
    }
    const std::string type = msg->value("type", "");
    if (type == "progress") {
      std::string text = msg->value("message", "");
      if (o.doing_follows_progress && !text.empty()) doing = text;
      std::optional<double> fraction;
      if (msg->contains("fraction") && (*msg)["fraction"].is_number()) fraction = (*msg)["fraction"].get<double>();
      if (o.progress) o.progress(text, fraction);
    } else if (type == "result") {
      return msg->value("result", json::object());
    } else if (type == "error") {
      WorkerError e = WorkerProtocol::error_from(msg->value("error", json()));
      if (e.kind() == WorkerError::Kind::Cancelled)
        throw WorkerError(WorkerError::Kind::Cancelled, fmt::format("cancelled while {}", doing));
      throw e;
    } else {
      proc_->terminate(milliseconds(200));
      throw WorkerError(WorkerError::Kind::Protocol, fmt::format("unknown worker message type '{}'", type));
    }
  }
  proc_->terminate(milliseconds(500));
  throw WorkerError(WorkerError::Kind::Cancelled,
                    fmt::format("cancelled while {}; the worker did not stop within {:.0f} s and was ended",
                                doing, duration<double>(o.cancel_grace).count()));
}

void WorkerConnection::shutdown(milliseconds wait) {
  if (proc_->running()) {
    if (proc_->write_stdin(WorkerProtocol::shutdown().dump() + "\n")) {
      proc_->close_stdin();
      proc_->wait(wait);
    }
  }
  proc_->terminate(milliseconds(500));
}

}  // namespace nova
