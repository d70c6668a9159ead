#include "core/jobs/job_queue.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include <fmt/format.h>

namespace nova {
namespace {
constexpr std::size_t kMaxLogLines = 2000;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

JobQueue::JobQueue(Options options) : options_(std::move(options)) {
  options_.gpu_devices = std::max(0, options_.gpu_devices);
  exclusive_running_.assign(options_.gpu_devices, 0);
  shared_running_.assign(options_.gpu_devices, 0);
  for (int d = 0; d < options_.gpu_devices; ++d) {
    threads_.emplace_back([this, d] { lane_loop(JobLane::Gpu, d); });
    for (int i = 0; i < options_.shared_per_device; ++i)
      threads_.emplace_back([this, d] { lane_loop(JobLane::GpuShared, d); });
  }
  for (int i = 0; i < options_.cpu_threads; ++i)
    threads_.emplace_back([this] { lane_loop(JobLane::Cpu, 0); });
  threads_.emplace_back([this] { watchdog_loop(); });
}

JobQueue::~JobQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [id, e] : jobs_)
      if (!is_finished(e->info.state)) e->token.cancel("the job system is shutting down");
  }
  changed_.notify_all();
  for (auto& t : threads_) t.join();
}

void JobQueue::set_listener(Listener listener) {
  std::lock_guard lock(listener_mutex_);
  listener_ = std::move(listener);
}

void JobQueue::notify(const JobInfo& info) {
  std::lock_guard lock(listener_mutex_);
  if (listener_) listener_(info);
}

int JobQueue::submit(JobSpec spec) {
  std::vector<JobInfo> changed;
  int id;
  {
    std::lock_guard lock(mutex_);
    id = next_id_++;
    std::vector<std::string> keys = spec.supersedes;
    if (!spec.key.empty()) keys.push_back(spec.key);
    if (!keys.empty()) {
      for (auto& [other_id, e] : jobs_) {
        if (is_finished(e->info.state) || std::find(keys.begin(), keys.end(), e->info.key) == keys.end())
          continue;
        e->superseded = true;
        e->token.cancel("superseded");
        if (e->info.state == JobState::Queued) {
          e->info.state = JobState::Superseded;
          e->info.error = fmt::format("superseded by job {}", id);
          std::erase(queued_, other_id);
          ++e->info.revision;
          changed.push_back(e->info);
        }
      }
    }
    auto e = std::make_unique<Entry>();
    e->info.id = id;
    e->info.key = spec.key;
    e->info.title = spec.title;
    e->info.lane = spec.lane;
    e->info.device = spec.device;
    e->info.budget_s = std::chrono::duration<double>(spec.budget).count();
    e->spec = std::move(spec);
    changed.push_back(e->info);
    jobs_[id] = std::move(e);
    queued_.push_back(id);
  }
  changed_.notify_all();
  for (const auto& c : changed) notify(c);
  return id;
}

bool JobQueue::cancel(int id) {
  std::optional<JobInfo> changed;
  {
    std::lock_guard lock(mutex_);
    auto it = jobs_.find(id);
    if (it == jobs_.end() || is_finished(it->second->info.state)) return false;
    Entry& e = *it->second;
    e.token.cancel("cancelled");
    if (e.info.state == JobState::Queued) {
      std::erase(queued_, id);
      e.info.state = JobState::Cancelled;
      e.info.error = "cancelled before it started";
      ++e.info.revision;
      changed = e.info;
    }
  }
  changed_.notify_all();
  if (changed) notify(*changed);
  return true;
}

std::optional<JobInfo> JobQueue::info(int id) const {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  JobInfo i = it->second->info;
  if (i.state == JobState::Running) i.elapsed_s = seconds_since(it->second->started);
  return i;
}

std::vector<JobInfo> JobQueue::snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<JobInfo> out;
  for (const auto& [id, e] : jobs_) {
    out.push_back(e->info);
    if (e->info.state == JobState::Running) out.back().elapsed_s = seconds_since(e->started);
  }
  return out;
}

std::optional<JobInfo> JobQueue::wait(int id, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] {
    auto it = jobs_.find(id);
    return it == jobs_.end() || is_finished(it->second->info.state);
  });
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second->info;
}

bool JobQueue::can_start(const Entry& e, JobLane lane, int device) const {
  if (e.spec.lane != lane) return false;
  if (lane == JobLane::Cpu) return true;
  if (e.spec.device != kAnyDevice && e.spec.device != device) return false;
  // A Gpu job waits for the device's shared jobs to finish; shared jobs wait for its Gpu job.
  return lane == JobLane::Gpu ? shared_running_[device] == 0 : exclusive_running_[device] == 0;
}

void JobQueue::lane_loop(JobLane lane, int device) {
  for (;;) {
    Entry* picked = nullptr;
    JobInfo running;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] {
        if (stopping_) return true;
        for (int id : queued_)
          if (can_start(*jobs_.at(id), lane, device)) return true;
        return false;
      });
      if (stopping_) return;
      for (auto it = queued_.begin(); it != queued_.end(); ++it) {
        auto& e = jobs_.at(*it);
        if (can_start(*e, lane, device)) {
          picked = e.get();
          queued_.erase(it);
          break;
        }
      }
      if (lane == JobLane::Gpu) ++exclusive_running_[device];
      if (lane == JobLane::GpuShared) ++shared_running_[device];
      if (lane != JobLane::Cpu) picked->info.device = device;
      picked->info.state = JobState::Running;
      picked->started = std::chrono::steady_clock::now();
      ++picked->info.revision;
      running = picked->info;
    }
    notify(running);
    run(*picked);
    if (lane != JobLane::Cpu) {
      {
        std::lock_guard lock(mutex_);
        if (lane == JobLane::Gpu) --exclusive_running_[device];
        if (lane == JobLane::GpuShared) --shared_running_[device];
      }
      changed_.notify_all();
    }
  }
}

void JobQueue::run(Entry& e) {
  JobContext ctx(e.token, e.spec.budget,
                 [this, &e](const std::string& message, std::optional<double> fraction, bool is_log) {
                   JobInfo copy;
                   {
                     std::lock_guard lock(mutex_);
                     if (is_log) {
                       if (e.info.log.size() < kMaxLogLines) e.info.log.push_back(message);
                     } else {
                       e.info.message = message;
                       if (fraction) e.info.progress = std::clamp(*fraction, 0.0, 1.0);
                     }
                     e.info.elapsed_s = seconds_since(e.started);
                     ++e.info.revision;
                     copy = e.info;
                   }
                   notify(copy);
                 },
                 e.info.lane == JobLane::Cpu ? -1 : e.info.device);
  try {
    nlohmann::json result = e.spec.work(ctx);
    finish(e, e.token.cancelled() ? JobState::Cancelled : JobState::Succeeded, std::move(result), {});
  } catch (const Cancelled& c) {
    finish(e, JobState::Cancelled, {}, c.what());
  } catch (const std::exception& ex) {
    // Work that stopped because its token was cancelled (a worker ended on cancel) was cancelled,
    // whatever it threw on the way out.
    finish(e, e.token.cancelled() ? JobState::Cancelled : JobState::Failed, {}, ex.what());
  }
}

void JobQueue::finish(Entry& e, JobState state, nlohmann::json result, std::string error) {
  JobInfo copy;
  {
    std::lock_guard lock(mutex_);
    // The token says why work stopped; supersession and the watchdog win over what the work threw.
    if (e.superseded) {
      state = JobState::Superseded;
      result = nullptr;
      error = "superseded by a newer request; its result was discarded";
    } else if (e.timed_out) {
      state = JobState::TimedOut;
      result = nullptr;
      if (error.empty() || error == "budget")
        error = fmt::format("ran past its budget of {:.0f} s", e.info.budget_s);
    } else if (state == JobState::Cancelled && error.empty()) {
      error = "cancelled";
    }
    e.info.state = state;
    e.info.result = std::move(result);
    e.info.error = std::move(error);
    e.info.elapsed_s = seconds_since(e.started);
    e.info.progress = state == JobState::Succeeded ? 1.0 : e.info.progress;
    if (state != JobState::Superseded) write_result(e.info);
    ++e.info.revision;
    copy = e.info;
  }
  changed_.notify_all();
  notify(copy);
}

void JobQueue::write_result(JobInfo& info) const {
  if (options_.results_dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(options_.results_dir, ec);
  std::string key = info.key;
  for (char& c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  auto path = options_.results_dir / fmt::format("job-{:04d}{}{}.json", info.id, key.empty() ? "" : "-", key);
  auto tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp);
    out << nlohmann::json(info).dump(2) << "\n";
    if (!out) return;
  }
  std::filesystem::rename(tmp, path, ec);
  if (!ec) info.result_file = path;
}

void JobQueue::watchdog_loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    changed_.wait_for(lock, std::chrono::milliseconds(50));
    for (auto& [id, e] : jobs_) {
      if (e->info.state != JobState::Running || e->spec.budget.count() == 0 || e->timed_out) continue;
      if (std::chrono::steady_clock::now() - e->started > e->spec.budget) {
        e->timed_out = true;
        e->token.cancel("budget");
      }
    }
  }
}

}  // namespace nova
