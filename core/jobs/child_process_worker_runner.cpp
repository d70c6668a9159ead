#include "core/jobs/child_process_worker_runner.h"

#include <atomic>
#include <fstream>

#include <fmt/format.h>
#include <unistd.h>

#include "core/env/resource_paths.h"
#include "core/env/settings.h"
#include "core/jobs/worker_run_error.h"
#include "core/worker/child_process.h"

namespace nova {
namespace {
std::string tail_of(const std::string& s, std::size_t n = 4000) {
  return s.size() <= n ? s : s.substr(s.size() - n);
}

// The last non-empty line of the worker's stderr: usually the exception it died of.
std::string last_line(const std::string& s) {
  auto end = s.find_last_not_of("\n ");
  if (end == std::string::npos) return {};
  auto start = s.rfind('\n', end);
  return s.substr(start == std::string::npos ? 0 : start + 1,
                  end - (start == std::string::npos ? 0 : start + 1) + 1);
}
}  // namespace

ChildProcessWorkerRunner::ChildProcessWorkerRunner(std::string python, std::filesystem::path work_dir)
    : python_(python.empty() ? Settings::load().resolved_python() : std::move(python)),
      work_dir_(work_dir.empty()
                    ? std::filesystem::temp_directory_path() / fmt::format("nova-jobs-{}", getpid())
                    : std::move(work_dir)) {}

ChildProcessWorkerRunner::~ChildProcessWorkerRunner() { keep_standby(false); }

ChildProcess::Env ChildProcessWorkerRunner::worker_env() const {
  ChildProcess::Env env = ChildProcess::minimal_env();
  std::string path;
  for (const auto& p : extra_paths_) path += p.string() + ":";
  env["PYTHONPATH"] = path + python_package_dir().string();
  env["PYTHONUNBUFFERED"] = "1";
  return env;
}

void ChildProcessWorkerRunner::keep_standby(bool on) {
  std::unique_ptr<ChildProcess> old;
  {
    std::lock_guard lock(standby_mutex_);
    keep_standby_ = on;
    if (on && !standby_) start_standby_locked();
    if (!on) old = std::move(standby_);
  }
  if (old) old->terminate(std::chrono::milliseconds(200));
}

void ChildProcessWorkerRunner::start_standby_locked() {
  auto proc = std::make_unique<ChildProcess>();
  try {
    proc->start({python_, "-m", module_prefix_ + "standby"}, worker_env());
  } catch (const std::exception&) {
    return;  // no standby: the command starts its own process and reports why that fails
  }
  standby_ = std::move(proc);
}

std::unique_ptr<ChildProcess> ChildProcessWorkerRunner::take_standby() {
  std::lock_guard lock(standby_mutex_);
  std::unique_ptr<ChildProcess> proc = std::move(standby_);
  if (keep_standby_) start_standby_locked();
  if (proc && proc->wait(std::chrono::milliseconds(0))) proc.reset();  // it died waiting
  return proc;
}

nlohmann::json ChildProcessWorkerRunner::run(const std::string& cmd, const nlohmann::json& args,
                                             const WorkerCall& call) {
  static std::atomic<int> counter{0};
  std::filesystem::create_directories(work_dir_);
  auto args_path = work_dir_ / fmt::format("{}-{}.json", cmd, ++counter);
  {
    std::ofstream out(args_path);
    out << args.dump();
  }
  const std::string doing = call.doing.empty() ? "running " + cmd : call.doing;
  std::unique_ptr<ChildProcess> started = take_standby();
  if (started &&
      started->write_stdin(nlohmann::json{{"cmd", cmd}, {"args", args_path.string()}}.dump() + "\n")) {
    ++standby_runs_;
  } else {
    started = std::make_unique<ChildProcess>();
    started->start({python_, "-m", module_prefix_ + cmd, args_path.string()}, worker_env());
  }
  ChildProcess& proc = *started;
  const auto deadline = std::chrono::steady_clock::now() + call.budget;
  std::optional<nlohmann::json> result;
  std::string reported_error;
  std::size_t stderr_seen = 0;
  auto relay_stderr = [&] {
    const std::string& err = proc.stderr_text();
    while (call.log) {
      auto nl = err.find('\n', stderr_seen);
      if (nl == std::string::npos) break;
      call.log(err.substr(stderr_seen, nl - stderr_seen));
      stderr_seen = nl + 1;
    }
  };
  for (;;) {
    auto line = proc.read_line(std::chrono::milliseconds(100));
    relay_stderr();
    if (line) {
      nlohmann::json msg = nlohmann::json::parse(*line, nullptr, false);
      if (msg.is_discarded() || !msg.is_object()) {
        if (call.log) call.log(*line);
      } else if (msg.value("type", "") == "progress") {
        if (call.progress) {
          std::optional<double> f;
          if (msg.contains("fraction") && msg["fraction"].is_number()) f = msg["fraction"].get<double>();
          call.progress(msg.value("message", ""), f);
        }
      } else if (msg.value("type", "") == "result") {
        result = msg["result"];
      } else if (msg.value("type", "") == "error") {
        reported_error = msg["error"].value("message", "unknown error");
      }
    } else if (proc.eof()) {
      break;
    }
    if (call.cancel.cancelled()) {
      proc.terminate();
      relay_stderr();
      if (call.cancel.reason() == "budget")
        throw WorkerRunError(WorkerRunError::Kind::TimedOut,
                             fmt::format("worker ended by the watchdog: over its budget while {}", doing),
                             tail_of(proc.stderr_text()));
      throw WorkerRunError(WorkerRunError::Kind::Cancelled,
                           fmt::format("{} while {}", call.cancel.reason(), doing),
                           tail_of(proc.stderr_text()));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      proc.terminate();
      throw WorkerRunError(WorkerRunError::Kind::TimedOut,
                           fmt::format("worker ended by the watchdog: over its budget of {:.0f} s while {}",
                                       std::chrono::duration<double>(call.budget).count(), doing),
                           tail_of(proc.stderr_text()));
    }
  }
  auto status = proc.wait(std::chrono::seconds(10));
  if (!status) status = proc.terminate();
  relay_stderr();
  std::error_code ec;
  std::filesystem::remove(args_path, ec);
  if (status->signal) {
    std::string name = status->describe();  // "killed by SIGSEGV"
    auto pos = name.find("SIG");
    throw WorkerRunError(
        WorkerRunError::Kind::Crashed,
        fmt::format("worker crashed: {} while {}", pos == std::string::npos ? name : name.substr(pos), doing),
        tail_of(proc.stderr_text()));
  }
  if (result) return *result;
  std::string why = !reported_error.empty() ? reported_error : last_line(proc.stderr_text());
  throw WorkerRunError(WorkerRunError::Kind::Failed,
                       fmt::format("worker failed while {} ({}): {}", doing, status->describe(),
                                   why.empty() ? "no result" : why),
                       tail_of(proc.stderr_text()));
}

}  // namespace nova
