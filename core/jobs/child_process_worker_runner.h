#pragma once
// A WorkerRunner that runs each command in a worker process of its own: `python -m nova_worker
// --once` says hello, takes its one request, answers it over the worker protocol (progress, then
// the result or a typed error) and exits. A fresh process per command means a crashed or wedged
// candidate never affects the next job; the watchdog here ends the process past its budget, and a
// cancel goes to the worker as a cancel message, followed by the end of its process group if it
// does not stop. Long-lived owners can keep a standby process (`--once --preload`: Python and
// torch already imported, hello said) that the next command is handed to, so it starts without
// that wait. A call that carries a sandbox (LLM-written code) never takes the standby: it gets a fresh
// worker inside bubblewrap (core/sandbox/bwrap_command.h) with a private work folder of its own.
// With a Ray cluster set (set_ray), the process is the Ray lane (`python -m nova_worker.ray_lane
// --address A --once`): the same protocol, its GPU commands run as Ray tasks of one GPU each on the
// cluster; sandboxed calls still run here, in bubblewrap (LLM code is not sent to the cluster).
#include <atomic>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/jobs/worker_runner.h"
#include "core/worker/child_process.h"
#include "core/worker/worker_connection.h"

namespace nova {

class ChildProcessWorkerRunner : public WorkerRunner {
 public:
  // `python` empty: Settings' resolved interpreter. `work_dir`: the folder given to the workers for
  // the files they write (sources sent inline, build folders).
  explicit ChildProcessWorkerRunner(std::string python = {}, std::filesystem::path work_dir = {});
  ~ChildProcessWorkerRunner() override;
  nlohmann::json run(const std::string& cmd, const nlohmann::json& args, const WorkerCall& call) override;

  // On: `count` workers are kept started ahead (`python -m <package> --once --preload`, which imports
  // torch, says hello and waits for its request; one per GPU lane, so lanes that start together each
  // find one); a command is handed to one and a new standby starts at once. Each command still has a
  // process of its own. For the studio and other long-lived owners; off by default, since a one-shot
  // command would only start a process to kill it. `first_preload`: what the first standby this call
  // starts imports ahead ("intake": torch and torch.export, not torch.compile's stack, for a session
  // whose first command is its intake, which waits for it; empty: the full preload); every other
  // standby has the full preload.
  void keep_standby(bool on, int count = 1, const std::string& first_preload = {});
  // Commands that ran on a standby process rather than a fresh one.
  int standby_runs() const { return standby_runs_; }
  // Standbys started and waiting for a command now.
  int standbys_waiting() const {
    std::lock_guard lock(standby_mutex_);
    return static_cast<int>(standbys_.size());
  }

  // The worker package run as `python -m <package>`, given as its module prefix ("nova_worker.";
  // tests swap in a package that misbehaves in ways the real one does not).
  void set_module_prefix(std::string prefix) { module_prefix_ = std::move(prefix); }
  // A folder put on the worker's PYTHONPATH before the worker package (tests' own modules).
  void add_python_path(std::filesystem::path dir) { extra_paths_.push_back(std::move(dir)); }
  // Commands go through the Ray lane to the cluster at `address` ("host:port"); `gpu_kind`: the
  // accelerator type its tasks ask for (empty: the cluster's only kind). Set before the first run.
  void set_ray(std::string address, std::string gpu_kind = {}) {
    ray_address_ = std::move(address);
    ray_gpu_kind_ = std::move(gpu_kind);
  }

 private:
  ChildProcess::Env worker_env() const;
  // `local`: the worker itself, also when a Ray cluster is set (the sandbox).
  // `preload`: a standby's `--preload` (`--preload=P` for a profile other than the full one).
  std::vector<std::string> worker_argv(bool preload, bool local = false, const std::string& profile = {}) const;
  std::string package_location() const;
  // The standby, if there is a live one (a new one is started in its place), else null.
  std::unique_ptr<WorkerConnection> take_standby();
  // Starts standbys until there are standby_count_, the first of them with `first_profile`'s preload.
  void fill_standbys_locked(const std::string& first_profile = {});

  std::string python_;
  std::filesystem::path work_dir_;
  std::string module_prefix_ = "nova_worker.";
  std::vector<std::filesystem::path> extra_paths_;
  std::string ray_address_, ray_gpu_kind_;
  mutable std::mutex standby_mutex_;
  bool keep_standby_ = false;
  int standby_count_ = 1;
  std::deque<std::unique_ptr<WorkerConnection>> standbys_;
  std::atomic<int> standby_runs_{0};
};

}  // namespace nova
