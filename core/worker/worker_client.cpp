#include "core/worker/worker_client.h"

#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/env/resource_paths.h"

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

WorkerError::Kind kind_from_string(const std::string& kind) {
  if (kind == "user_error") return WorkerError::Kind::UserError;
  if (kind == "bad_request") return WorkerError::Kind::Protocol;
  return WorkerError::Kind::Internal;
}

}  // namespace

WorkerClient::WorkerClient(std::string python, milliseconds start_timeout)
    : python_(python.empty() ? default_python() : std::move(python)), start_timeout_(start_timeout) {}

WorkerClient::~WorkerClient() {
  try {
    stop();
  } catch (...) {
  }
}

bool WorkerClient::running() const { return proc_ && proc_->running(); }

void WorkerClient::discard() {
  if (!proc_) return;
  proc_->terminate(milliseconds(500));
  last_stderr_ = proc_->stderr_text();
  proc_.reset();
}

std::string WorkerClient::stderr_tail(std::size_t max_bytes) const {
  const std::string& text = proc_ ? proc_->stderr_text() : last_stderr_;
  return text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
}

std::optional<json> WorkerClient::next_message(steady_clock::time_point deadline) {
  for (;;) {
    auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    auto line = proc_->read_line(left);
    if (!line) return std::nullopt;
    try {
      return json::parse(*line);
    } catch (const json::parse_error&) {
      // The worker routes user prints to stderr, so this is a stray native write: log, go on.
      spdlog::warn("worker wrote a non-protocol line to stdout: {}", line->substr(0, 200));
    }
  }
}

void WorkerClient::fail_dead(const std::string& doing) {
  auto st = proc_->wait(seconds(3));
  if (!st) st = proc_->terminate(milliseconds(200));
  std::string cause = death_cause(st);
  discard();
  throw WorkerError(WorkerError::Kind::Crashed, fmt::format("worker crashed: {} while {}", cause, doing));
}

void WorkerClient::fail_timeout(milliseconds timeout, const std::string& doing) {
  discard();
  throw WorkerError(WorkerError::Kind::Timeout,
                    fmt::format("worker timed out after {:.0f} s while {}; it was stopped",
                                duration<double>(timeout).count(), doing));
}

const WorkerInfo& WorkerClient::start() {
  if (running()) return info_;
  discard();
  ChildProcess::Env env = ChildProcess::minimal_env();
  env["PYTHONPATH"] = python_package_dir().string();
  env["PYTHONUNBUFFERED"] = "1";
  env["PYTHONDONTWRITEBYTECODE"] = "1";  // never litter the user's model folder
  proc_ = std::make_unique<ChildProcess>();
  try {
    proc_->start({python_, "-m", "nova_worker"}, env);
  } catch (const std::exception& e) {
    proc_.reset();
    throw WorkerError(WorkerError::Kind::Crashed, fmt::format("cannot start the worker: {}", e.what()));
  }
  ++starts_;
  auto hello = next_message(steady_clock::now() + start_timeout_);
  if (!hello) {
    if (proc_->eof()) {
      std::string tail = stderr_tail(2000);
      auto st = proc_->wait(seconds(3));
      std::string cause = death_cause(st);
      discard();
      throw WorkerError(WorkerError::Kind::Crashed,
                        fmt::format("worker exited ({}) before its hello line; is '{}' a Python with the "
                                    "nova_worker package on its path?\n{}",
                                    cause, python_, tail));
    }
    fail_timeout(start_timeout_, "starting up");
  }
  if (hello->value("type", "") != "hello") {
    discard();
    throw WorkerError(WorkerError::Kind::Protocol,
                      fmt::format("worker's first line is not a hello: {}", hello->dump().substr(0, 200)));
  }
  WorkerInfo info = WorkerInfo::from_hello(*hello);
  if (info.protocol != kProtocolVersion) {
    discard();
    throw WorkerError(WorkerError::Kind::Protocol,
                      fmt::format("the worker at {} speaks protocol {}, this Nova speaks {}: install the "
                                  "nova_worker package that came with this Nova",
                                  python_package_dir().string(), info.protocol, kProtocolVersion));
  }
  info_ = std::move(info);
  spdlog::debug("worker {} started: python {} torch {}", info_.pid, info_.python, info_.torch);
  return info_;
}

json WorkerClient::request(const std::string& cmd, const json& args, milliseconds timeout,
                           const Progress& progress) {
  start();
  const int id = next_id_++;
  std::string doing = fmt::format("running '{}'", cmd);
  json req = {{"id", id}, {"cmd", cmd}, {"args", args}};
  if (!proc_->write_stdin(req.dump() + "\n")) fail_dead(doing);
  auto deadline = steady_clock::now() + timeout;
  for (;;) {
    auto msg = next_message(deadline);
    if (!msg) {
      if (proc_->eof()) fail_dead(doing);
      fail_timeout(timeout, doing);
    }
    if (!msg->contains("id") || (*msg)["id"] != id) {
      spdlog::warn("worker message for another request ignored: {}", msg->dump().substr(0, 200));
      continue;
    }
    const std::string type = msg->value("type", "");
    if (type == "progress") {
      std::string text = msg->value("message", "");
      if (!text.empty()) doing = text;
      std::optional<double> fraction;
      if (msg->contains("fraction") && (*msg)["fraction"].is_number())
        fraction = (*msg)["fraction"].get<double>();
      if (progress) progress(text, fraction);
    } else if (type == "result") {
      return msg->value("result", json::object());
    } else if (type == "error") {
      const json err = msg->value("error", json::object());
      throw WorkerError(kind_from_string(err.value("kind", "")), err.value("message", "worker error"),
                        err.value("traceback", ""), err.value("file", ""),
                        err.contains("line") && err["line"].is_number_integer() ? err["line"].get<int>() : 0);
    } else {
      discard();
      throw WorkerError(WorkerError::Kind::Protocol, fmt::format("unknown worker message type '{}'", type));
    }
  }
}

void WorkerClient::stop() {
  if (!proc_) return;
  if (proc_->running()) {
    json req = {{"id", next_id_++}, {"cmd", "shutdown"}, {"args", json::object()}};
    if (proc_->write_stdin(req.dump() + "\n")) {
      proc_->close_stdin();
      proc_->wait(seconds(2));
    }
  }
  discard();
}

}  // namespace nova
