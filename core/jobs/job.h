#pragma once
// What a job is: JobSpec is what a caller submits to the JobQueue; JobInfo is the queue's
// snapshot of one job (state, progress, log, result) that the CLI prints and the jobs panel shows.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nova {

class JobContext;

// Gpu: alone on its device (benchmarks: timings must not be shared); GpuShared: several side by side on
// a device, never beside a Gpu job of that device (validation: correctness, not time); Cpu: builds.
enum class JobLane { Gpu, Cpu, GpuShared };
// A GPU job's device: any free one (the queue records which it ran on in JobInfo::device).
inline constexpr int kAnyDevice = -1;
enum class JobState { Queued, Running, Succeeded, Failed, Cancelled, Superseded, TimedOut };

std::string to_string(JobLane lane);
std::string to_string(JobState state);
bool is_finished(JobState state);

struct JobSpec {
  std::string key;  // jobs with the same key supersede each other ("validate:group0:cand3")
  std::vector<std::string> supersedes;  // further keys whose unfinished jobs this one supersedes
  std::string title;                    // for people: "validate candidate 3"
  JobLane lane = JobLane::Cpu;
  int device = kAnyDevice;                          // GPU lanes: which device, or any free one
  std::chrono::milliseconds budget{0};              // 0: none; past it the watchdog cancels the job
  std::function<nlohmann::json(JobContext&)> work;  // returns the result; throws on failure
};

struct JobInfo {
  int id = 0;
  std::string key, title;
  JobLane lane = JobLane::Cpu;
  int device = kAnyDevice;  // GPU lanes: the device it was asked for, then the one it ran on
  JobState state = JobState::Queued;
  double progress = 0;  // 0..1
  std::string message;  // the latest progress message
  std::vector<std::string> log;
  double elapsed_s = 0;  // running time so far (or in total once finished)
  double budget_s = 0;
  nlohmann::json result;              // when Succeeded
  std::string error;                  // when Failed, Cancelled or TimedOut: a plain sentence
  std::filesystem::path result_file;  // where the finished job was written, if anywhere
  // Bumped on every change: listeners are called from several threads, so a view keeps the
  // snapshot with the highest revision and drops late, older ones.
  std::uint64_t revision = 0;
};

void to_json(nlohmann::json& j, const JobInfo& info);

}  // namespace nova
