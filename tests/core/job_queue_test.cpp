// The job system with fake slow jobs: progress, lanes, cancel, supersession, the budget watchdog
// and results written to the project folder.
#include "core/jobs/job_queue.h"

#include <atomic>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "support/test_paths.h"

namespace nova {
namespace {
using namespace std::chrono_literals;

// A fake slow job: `steps` steps of `step` each, reporting progress and honouring cancel.
JobSpec slow_job(std::string key, JobLane lane, int steps, std::chrono::milliseconds step,
                 std::atomic<int>* running = nullptr, std::atomic<int>* max_running = nullptr) {
  JobSpec s;
  s.key = key;
  s.title = "fake " + key;
  s.lane = lane;
  s.work = [=](JobContext& ctx) {
    if (running) {
      int now = ++*running;
      int prev = max_running->load();
      while (now > prev && !max_running->compare_exchange_weak(prev, now)) {
      }
    }
    for (int i = 0; i < steps; ++i) {
      if (ctx.token().cancelled()) {
        if (running) --*running;
        ctx.token().throw_if_cancelled();
      }
      std::this_thread::sleep_for(step);
      ctx.progress("step " + std::to_string(i + 1), double(i + 1) / steps);
      ctx.log("did step " + std::to_string(i + 1));
    }
    if (running) --*running;
    return nlohmann::json{{"steps", steps}};
  };
  return s;
}

TEST(JobQueue, RunsAJobWithProgressLogAndResultWrittenToTheProject) {
  auto dir = test::scratch_dir("job_queue_results");
  JobQueue q({1, 2, dir});
  std::atomic<int> progress_events{0};
  q.set_listener([&](const JobInfo& i) {
    if (i.state == JobState::Running && !i.message.empty()) ++progress_events;
  });
  int id = q.submit(slow_job("a", JobLane::Cpu, 4, 10ms));
  auto info = q.wait(id, 5s);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->state, JobState::Succeeded) << info->error;
  EXPECT_EQ(info->result["steps"], 4);
  EXPECT_DOUBLE_EQ(info->progress, 1.0);
  EXPECT_EQ(info->log.size(), 4u);
  EXPECT_GE(info->elapsed_s, 0.04);
  EXPECT_GE(progress_events.load(), 4);
  ASSERT_TRUE(std::filesystem::exists(info->result_file)) << info->result_file;
  auto stored = nlohmann::json::parse(std::ifstream(info->result_file));
  EXPECT_EQ(stored["state"], "succeeded");
  EXPECT_EQ(stored["result"]["steps"], 4);
}

TEST(JobQueue, OneGpuJobPerDeviceWhileCpuJobsRunInParallel) {
  JobQueue q({1, 3, {}});
  std::atomic<int> gpu_running{0}, gpu_max{0}, cpu_running{0}, cpu_max{0};
  std::vector<int> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(q.submit(slow_job("g" + std::to_string(i), JobLane::Gpu, 3, 20ms, &gpu_running, &gpu_max)));
  for (int i = 0; i < 3; ++i)
    ids.push_back(q.submit(slow_job("c" + std::to_string(i), JobLane::Cpu, 3, 20ms, &cpu_running, &cpu_max)));
  for (int id : ids) ASSERT_EQ(q.wait(id, 10s)->state, JobState::Succeeded);
  EXPECT_EQ(gpu_max.load(), 1);
  EXPECT_GE(cpu_max.load(), 2);
}

TEST(JobQueue, CancelStopsARunningJobAndDropsAQueuedOne) {
  JobQueue q({1, 0, {}});
  int running = q.submit(slow_job("r", JobLane::Gpu, 500, 10ms));
  int queued = q.submit(slow_job("q", JobLane::Gpu, 2, 10ms));
  while (q.info(running)->state != JobState::Running) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(q.cancel(queued));
  EXPECT_EQ(q.info(queued)->state, JobState::Cancelled);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(q.cancel(running));
  auto info = q.wait(running, 5s);
  EXPECT_EQ(info->state, JobState::Cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_FALSE(q.cancel(running));  // already finished
}

TEST(JobQueue, ANewerRequestForTheSameCandidateSupersedesQueuedAndRunningJobs) {
  JobQueue q({1, 0, {}});
  int first = q.submit(slow_job("validate:cand3", JobLane::Gpu, 500, 10ms));
  while (q.info(first)->state != JobState::Running) std::this_thread::sleep_for(1ms);
  int second = q.submit(slow_job("validate:cand3", JobLane::Gpu, 500, 10ms));
  int other = q.submit(slow_job("validate:cand4", JobLane::Gpu, 1, 1ms));
  int third = q.submit(slow_job("validate:cand3", JobLane::Gpu, 2, 1ms));
  EXPECT_EQ(q.wait(first, 5s)->state, JobState::Superseded);
  EXPECT_TRUE(q.wait(first, 5s)->result.is_null());
  EXPECT_EQ(q.info(second)->state, JobState::Superseded);
  EXPECT_EQ(q.wait(other, 5s)->state, JobState::Succeeded);
  auto last = q.wait(third, 5s);
  EXPECT_EQ(last->state, JobState::Succeeded);
  EXPECT_EQ(last->result["steps"], 2);
}

TEST(JobQueue, TheWatchdogEndsAJobPastItsBudget) {
  JobQueue q({1, 0, {}});
  JobSpec s = slow_job("slow", JobLane::Gpu, 1000, 10ms);
  s.budget = 200ms;
  int id = q.submit(std::move(s));
  auto info = q.wait(id, 5s);
  EXPECT_EQ(info->state, JobState::TimedOut);
  EXPECT_NE(info->error.find("budget"), std::string::npos) << info->error;
  EXPECT_LT(info->elapsed_s, 1.5);
  // The lane is free again for the next job.
  EXPECT_EQ(q.wait(q.submit(slow_job("next", JobLane::Gpu, 1, 1ms)), 5s)->state, JobState::Succeeded);
}

TEST(JobQueue, AThrowingJobFailsWithItsMessageAndTheQueueGoesOn) {
  JobQueue q({1, 1, {}});
  JobSpec bad;
  bad.title = "bad";
  bad.work = [](JobContext&) -> nlohmann::json {
    throw std::runtime_error("worker crashed: SIGSEGV while x");
  };
  auto info = q.wait(q.submit(std::move(bad)), 5s);
  EXPECT_EQ(info->state, JobState::Failed);
  EXPECT_EQ(info->error, "worker crashed: SIGSEGV while x");
  EXPECT_EQ(q.wait(q.submit(slow_job("ok", JobLane::Cpu, 1, 1ms)), 5s)->state, JobState::Succeeded);
}

}  // namespace
}  // namespace nova
