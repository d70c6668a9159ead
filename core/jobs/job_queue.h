#pragma once
// The job system behind the studio's jobs panel and the CLI: a queue with GPU lanes, one per device
// (a Gpu job runs alone on its device: timings and memory must not be shared; GpuShared jobs, such as
// validations, run several side by side on a device but never beside a Gpu job there; a job asks for
// a device or for any free one and records the one it ran on) and a CPU lane (compiles, in parallel),
// progress and logs, cancel, per-job time budgets enforced by a watchdog (it cancels the job's
// token; work that runs a worker process ends the worker), supersession by key (a newer request
// for the same candidate drops the queued one and cancels the running one, whose result is then
// discarded), and finished results written as JSON into the project's results folder.
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/jobs/cancel_token.h"
#include "core/jobs/job.h"
#include "core/jobs/job_context.h"

namespace nova {

class JobQueue {
 public:
  struct Options {
    int gpu_devices = 1;  // devices 0..N-1, one Gpu-lane thread each
    int cpu_threads = 2;
    std::filesystem::path results_dir;  // empty: results are not written
    int shared_per_device = 4;          // GpuShared jobs side by side on one device
  };
  // Called from the queue's threads on every change of a job (state, progress, log line).
  using Listener = std::function<void(const JobInfo&)>;

  explicit JobQueue(Options options);
  ~JobQueue();  // cancels everything and joins
  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  int submit(JobSpec spec);
  bool cancel(int id);  // false if unknown or already finished
  std::optional<JobInfo> info(int id) const;
  std::vector<JobInfo> snapshot() const;  // every job, oldest first
  // Blocks until the job has finished or `timeout` passed; the job's info either way.
  std::optional<JobInfo> wait(int id, std::chrono::milliseconds timeout) const;
  void set_listener(Listener listener);

 private:
  struct Entry {
    JobInfo info;
    JobSpec spec;
    CancelToken token;
    std::chrono::steady_clock::time_point started;
    bool superseded = false;
    bool timed_out = false;
  };
  void lane_loop(JobLane lane, int device);
  // May a `lane` thread of `device` start this queued job now? (Under mutex_.)
  bool can_start(const Entry& e, JobLane lane, int device) const;
  void watchdog_loop();
  void run(Entry& e);
  void finish(Entry& e, JobState state, nlohmann::json result, std::string error);
  void notify(const JobInfo& info);
  void write_result(JobInfo& info) const;

  Options options_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::map<int, std::unique_ptr<Entry>> jobs_;
  std::deque<int> queued_;
  int next_id_ = 1;
  bool stopping_ = false;
  std::vector<int> exclusive_running_, shared_running_;  // per device
  Listener listener_;
  std::mutex listener_mutex_;
  std::vector<std::thread> threads_;
};

}  // namespace nova
