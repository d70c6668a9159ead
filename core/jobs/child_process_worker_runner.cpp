#include "core/jobs/child_process_worker_runner.h"

#include <algorithm>

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/env/resource_paths.h"
#include "core/env/settings.h"
#include "core/jobs/worker_run_error.h"
#include "core/sandbox/bwrap_command.h"
#include "core/worker/worker_env.h"

namespace nova {
namespace {
std::string tail_of(const std::string& s, std::size_t n = 4000) {
  return s.size() <= n ? s : s.substr(s.size() - n);
}

WorkerRunError::Kind run_error_kind(WorkerError::Kind kind) {
  switch (kind) {
    case WorkerError::Kind::UserError: return WorkerRunError::Kind::UserError;
    case WorkerError::Kind::BadRequest: return WorkerRunError::Kind::BadRequest;
    case WorkerError::Kind::Internal: return WorkerRunError::Kind::Internal;
    case WorkerError::Kind::Protocol: return WorkerRunError::Kind::Protocol;
    case WorkerError::Kind::Timeout: return WorkerRunError::Kind::TimedOut;
    case WorkerError::Kind::Cancelled: return WorkerRunError::Kind::Cancelled;
    case WorkerError::Kind::Crashed: return WorkerRunError::Kind::Crashed;
  }
  return WorkerRunError::Kind::Failed;
}
}  // namespace

ChildProcessWorkerRunner::ChildProcessWorkerRunner(std::string python, std::filesystem::path work_dir)
    : python_(python.empty() ? Settings::load().resolved_python() : std::move(python)),
      work_dir_(work_dir.empty()
                    ? std::filesystem::temp_directory_path() / fmt::format("nova-jobs-{}", getpid())
                    : std::move(work_dir)) {}

ChildProcessWorkerRunner::~ChildProcessWorkerRunner() { keep_standby(false); }

ChildProcess::Env ChildProcessWorkerRunner::worker_env() const {
  ChildProcess::Env env = WorkerEnv::make();
  std::string path;
  for (const auto& p : extra_paths_) path += p.string() + ":";
  env["PYTHONPATH"] = path + env["PYTHONPATH"];
  return env;
}

std::vector<std::string> ChildProcessWorkerRunner::worker_argv(bool preload, bool local,
                                                               const std::string& profile) const {
  std::string package = module_prefix_;
  if (!package.empty() && package.back() == '.') package.pop_back();
  std::vector<std::string> argv{python_, "-m", package};
  if (!ray_address_.empty() && !local) {
    argv = {python_, "-m", module_prefix_ + "ray_lane", "--address", ray_address_};
    if (!ray_gpu_kind_.empty()) argv.insert(argv.end(), {"--accelerator", ray_gpu_kind_});
  }
  argv.push_back("--once");
  // (The Ray lane's preload connects to the cluster: it has no profiles.)
  if (preload) argv.push_back(profile.empty() || !ray_address_.empty() ? "--preload" : "--preload=" + profile);
  return argv;
}

std::string ChildProcessWorkerRunner::package_location() const {
  return extra_paths_.empty() ? python_package_dir().string() : extra_paths_.front().string();
}

void ChildProcessWorkerRunner::keep_standby(bool on, int count, const std::string& first_preload) {
  std::deque<std::unique_ptr<WorkerConnection>> old;
  {
    std::lock_guard lock(standby_mutex_);
    keep_standby_ = on;
    standby_count_ = std::max(1, count);
    if (on) fill_standbys_locked(first_preload);
    if (!on) old.swap(standbys_);
  }
  for (auto& conn : old) conn->terminate(std::chrono::milliseconds(200));
}

void ChildProcessWorkerRunner::fill_standbys_locked(const std::string& first_profile) {
  std::string profile = first_profile;  // the first one started here only (one intake per session)
  while (static_cast<int>(standbys_.size()) < standby_count_) {
    try {
      standbys_.push_back(
          std::make_unique<WorkerConnection>(worker_argv(true, false, profile), worker_env(), package_location()));
    } catch (const WorkerError&) {
      return;  // no standby: the command starts its own process and reports why that fails
    }
    profile.clear();
  }
}

std::unique_ptr<WorkerConnection> ChildProcessWorkerRunner::take_standby() {
  std::lock_guard lock(standby_mutex_);
  std::unique_ptr<WorkerConnection> conn;
  while (!conn && !standbys_.empty()) {
    conn = std::move(standbys_.front());
    standbys_.pop_front();
    if (conn->wait(std::chrono::milliseconds(0))) conn.reset();  // it died waiting
  }
  if (keep_standby_) fill_standbys_locked();
  return conn;
}

nlohmann::json ChildProcessWorkerRunner::run(const std::string& cmd, const nlohmann::json& args,
                                             const WorkerCall& call) {
  const std::string doing = call.doing.empty() ? "running " + cmd : call.doing;
  const auto deadline = std::chrono::steady_clock::now() + call.budget;
  std::filesystem::create_directories(work_dir_);
  nlohmann::json request_args = args.is_object() ? args : nlohmann::json::object();
  if (!request_args.contains("work_dir")) request_args["work_dir"] = work_dir_.string();

  // LLM-written code: a fresh worker in the sandbox, in a private work folder removed afterwards.
  std::optional<std::filesystem::path> private_dir;
  struct RemoveAfter {
    std::optional<std::filesystem::path>& dir;
    ~RemoveAfter() {
      std::error_code ec;
      if (dir) std::filesystem::remove_all(*dir, ec);
    }
  } remove_after{private_dir};
  std::unique_ptr<WorkerConnection> conn;
  if (call.sandbox) {
    std::string pattern = (work_dir_ / "sandbox-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw WorkerRunError(WorkerRunError::Kind::Failed, fmt::format("cannot create a sandbox work folder in {} while {}",
                                                                     work_dir_.string(), doing));
    private_dir = pattern;
    request_args["work_dir"] = pattern;
    // A full-path build goes where the sandbox can write (the shared build folder is read-only there, and
    // a build the candidate's own code could touch must not be found again by another worker).
    if (request_args.contains("build_dir")) request_args["build_dir"] = (*private_dir / "extensions").string();
  } else if ((conn = take_standby())) {
    ++standby_runs_;
    // A standby has not touched CUDA yet: it narrows its devices before running the command (a Ray
    // lane's tasks get theirs from Ray).
    if (call.device >= 0 && ray_address_.empty()) request_args["cuda_visible_devices"] = std::to_string(call.device);
  }
  if (!conn) {
    ChildProcess::Env env = worker_env();
    // With a Ray cluster the lanes are the cluster's GPUs, not this machine's: a sandboxed call run
    // here sees this machine's own.
    if (call.device >= 0 && ray_address_.empty()) env["CUDA_VISIBLE_DEVICES"] = std::to_string(call.device);
    std::vector<std::string> argv = worker_argv(false, private_dir.has_value());
    if (private_dir) {
      BwrapCommand bwrap(call.sandbox->bwrap, *private_dir);
      argv = bwrap.argv(argv, env);
      env = bwrap.scrub(env);
    }
    try {
      conn = std::make_unique<WorkerConnection>(argv, env, package_location());
    } catch (const WorkerError& e) {
      throw WorkerRunError(WorkerRunError::Kind::Failed,
                           fmt::format("{} while {}{}", e.what(), doing, private_dir ? " (in the sandbox)" : ""));
    }
  }
  WorkerRequestOptions options;
  options.cancelled = [&] { return call.cancel.cancelled(); };
  options.progress = call.progress;
  options.log = call.log;
  options.doing = doing;
  try {
    const auto waiting = std::chrono::steady_clock::now();
    conn->await_hello(deadline, options.cancelled);
    if (call.started) call.started(std::chrono::duration<double>(std::chrono::steady_clock::now() - waiting).count());
    options.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    nlohmann::json result = conn->call(cmd, request_args, options);
    if (!conn->wait(std::chrono::seconds(2))) conn->terminate();  // a one-shot worker leaves by itself
    return result;
  } catch (const WorkerError& e) {
    conn->terminate();
    const std::string log = tail_of(conn->stderr_text());
    WorkerRunError::Kind kind = run_error_kind(e.kind());
    std::string message = e.what();
    if (e.kind() == WorkerError::Kind::Cancelled) {
      if (call.cancel.reason() == "budget") {
        kind = WorkerRunError::Kind::TimedOut;
        message = fmt::format("worker ended by the watchdog: over its budget while {}", doing);
      } else {
        message = fmt::format("{} while {}", call.cancel.reason(), doing);
      }
    } else if (e.kind() == WorkerError::Kind::Timeout) {
      message = fmt::format("worker ended by the watchdog: over its budget of {:.0f} s while {}",
                            std::chrono::duration<double>(call.budget).count(), doing);
    } else if (e.kind() == WorkerError::Kind::Crashed) {
      auto status = conn->wait(std::chrono::milliseconds(0));
      if (status && !status->signal) kind = WorkerRunError::Kind::Failed;  // exited without an answer
    } else if (e.kind() != WorkerError::Kind::Protocol) {
      message = fmt::format("worker failed while {}: {}", doing, e.what());
    }
    throw WorkerRunError(kind, message, log, e.file(), e.line(), e.traceback());
  }
}

}  // namespace nova
