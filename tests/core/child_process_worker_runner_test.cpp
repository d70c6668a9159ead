// Worker commands in child processes: the result protocol, progress, a crash reported by signal
// name, the watchdog ending a sleeping worker, cancel, and the job queue carrying a crash as a
// plain failure while the next job runs; the same through a standby worker started ahead, and the
// real nova_worker.standby handing its command to the stage as a fresh process would.
#include "core/jobs/child_process_worker_runner.h"

#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/env/settings.h"
#include "core/jobs/job_queue.h"
#include "core/jobs/worker_run_error.h"
#include "support/test_paths.h"
#include "support/worker_python.h"

namespace nova {
namespace {
using namespace std::chrono_literals;

class WorkerRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir("worker_runner");
    auto pkg = dir_ / "fake_worker";
    std::filesystem::create_directories(pkg);
    std::ofstream(pkg / "__init__.py") << "";
    // Each module behaves like `python -m nova_worker.<cmd> ARGS.json`.
    std::ofstream(pkg / "ok.py") << R"(import json, sys
args = json.load(open(sys.argv[1]))
print(json.dumps({"type": "progress", "message": "halfway", "fraction": 0.5}), flush=True)
print("a line for the log", file=sys.stderr, flush=True)
print(json.dumps({"type": "result", "result": {"echo": args["x"]}}), flush=True)
)";
    std::ofstream(pkg / "sleep.py") << "import time\nprint('{\"type\": \"progress\", \"message\": "
                                       "\"sleeping\"}', flush=True)\ntime.sleep(60)\n";
    std::ofstream(pkg / "crash.py") << "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n";
    std::ofstream(pkg / "fail.py") << R"(import json
print(json.dumps({"type": "error", "error": {"kind": "internal", "message": "CUDA error: out of memory"}}), flush=True)
raise SystemExit(1)
)";
    // Started ahead by keep_standby(): says it is ready, then runs the one command it is sent as
    // `python -m fake_worker.<cmd> ARGS.json` would. Exits at once while `no_standby` exists.
    std::ofstream(pkg / "standby.py") << R"(import json, os, runpy, sys
if os.path.exists(os.path.join(os.path.dirname(__file__), "no_standby")):
    raise SystemExit(3)
print(json.dumps({"type": "ready", "pid": os.getpid()}), flush=True)
request = json.loads(sys.stdin.readline())
sys.argv = [request["cmd"], request["args"]]
runpy.run_module("fake_worker." + request["cmd"], run_name="__main__")
)";
    runner_ = std::make_unique<ChildProcessWorkerRunner>(Settings{}.resolved_python(), dir_ / "work");
    runner_->add_python_path(dir_);
    runner_->set_module_prefix("fake_worker.");
  }
  std::filesystem::path dir_;
  std::unique_ptr<ChildProcessWorkerRunner> runner_;
};

TEST_F(WorkerRunnerTest, ReturnsTheResultAndRelaysProgressAndLog) {
  WorkerCall call;
  std::vector<std::string> progress, log;
  call.progress = [&](const std::string& m, std::optional<double> f) {
    progress.push_back(m);
    EXPECT_EQ(f, 0.5);
  };
  call.log = [&](const std::string& l) { log.push_back(l); };
  auto r = runner_->run("ok", {{"x", 42}}, call);
  EXPECT_EQ(r["echo"], 42);
  EXPECT_EQ(progress, std::vector<std::string>{"halfway"});
  EXPECT_NE(std::find(log.begin(), log.end(), "a line for the log"), log.end());
}

TEST_F(WorkerRunnerTest, ACrashIsReportedBySignalNameAndWhatTheWorkerWasDoing) {
  WorkerCall call;
  call.doing = "validating candidate 3";
  try {
    runner_->run("crash", {}, call);
    FAIL() << "no error";
  } catch (const WorkerRunError& e) {
    EXPECT_EQ(e.kind(), WorkerRunError::Kind::Crashed);
    EXPECT_STREQ(e.what(), "worker crashed: SIGSEGV while validating candidate 3");
  }
}

TEST_F(WorkerRunnerTest, TheWatchdogEndsASleepingWorkerPastItsBudget) {
  WorkerCall call;
  call.budget = 1500ms;
  call.doing = "benchmarking candidate 7";
  auto t0 = std::chrono::steady_clock::now();
  try {
    runner_->run("sleep", {}, call);
    FAIL() << "no error";
  } catch (const WorkerRunError& e) {
    EXPECT_EQ(e.kind(), WorkerRunError::Kind::TimedOut);
    EXPECT_NE(std::string(e.what()).find("over its budget of 2 s while benchmarking candidate 7"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST_F(WorkerRunnerTest, AnErrorTheWorkerReportsIsAPlainFailure) {
  try {
    runner_->run("fail", {}, WorkerCall{});
    FAIL() << "no error";
  } catch (const WorkerRunError& e) {
    EXPECT_EQ(e.kind(), WorkerRunError::Kind::Failed);
    EXPECT_NE(std::string(e.what()).find("CUDA error: out of memory"), std::string::npos) << e.what();
  }
}

TEST_F(WorkerRunnerTest, JobsCarryACrashAndACancelAndTheNextJobGetsAFreshWorker) {
  JobQueue q({1, 0, {}});
  auto job = [&](std::string cmd, std::chrono::milliseconds budget) {
    JobSpec s;
    s.key = cmd;
    s.lane = JobLane::Gpu;
    s.budget = budget;
    s.work = [this, cmd](JobContext& ctx) {
      WorkerCall call;
      call.cancel = ctx.token();
      call.budget = 60s;
      call.doing = "running " + cmd;
      return runner_->run(cmd, {{"x", 1}}, call);
    };
    return s;
  };
  auto crashed = q.wait(q.submit(job("crash", 0ms)), 20s);
  EXPECT_EQ(crashed->state, JobState::Failed);
  EXPECT_EQ(crashed->error, "worker crashed: SIGSEGV while running crash");
  auto watched = q.wait(q.submit(job("sleep", 1000ms)), 20s);
  EXPECT_EQ(watched->state, JobState::TimedOut) << watched->error;
  int sleeping = q.submit(job("sleep", 0ms));
  std::this_thread::sleep_for(300ms);
  q.cancel(sleeping);
  EXPECT_EQ(q.wait(sleeping, 20s)->state, JobState::Cancelled);
  auto ok = q.wait(q.submit(job("ok", 0ms)), 20s);
  EXPECT_EQ(ok->state, JobState::Succeeded) << ok->error;
}

TEST_F(WorkerRunnerTest, CommandsRunOnStandbyWorkersStartedAheadOneProcessEach) {
  runner_->keep_standby(true);
  for (int x : {1, 2, 3}) {
    std::vector<std::string> progress;
    WorkerCall call;
    call.progress = [&](const std::string& m, std::optional<double>) { progress.push_back(m); };
    EXPECT_EQ(runner_->run("ok", {{"x", x}}, call)["echo"], x);
    EXPECT_EQ(progress, std::vector<std::string>{"halfway"});
  }
  EXPECT_EQ(runner_->standby_runs(), 3);
  try {
    WorkerCall call;
    call.doing = "validating candidate 4";
    runner_->run("crash", {}, call);
    FAIL() << "no error";
  } catch (const WorkerRunError& e) {
    EXPECT_EQ(e.kind(), WorkerRunError::Kind::Crashed);
    EXPECT_STREQ(e.what(), "worker crashed: SIGSEGV while validating candidate 4");
  }
  EXPECT_EQ(runner_->standby_runs(), 4);
  EXPECT_EQ(runner_->run("ok", {{"x", 5}}, WorkerCall{})["echo"], 5);  // the crash took only its own
}

TEST_F(WorkerRunnerTest, AStandbyThatDiedWaitingIsReplacedByAFreshProcess) {
  std::ofstream(dir_ / "fake_worker" / "no_standby") << "";
  runner_->keep_standby(true);
  std::this_thread::sleep_for(500ms);  // the standby exits (code 3) before the command comes
  EXPECT_EQ(runner_->run("ok", {{"x", 7}}, WorkerCall{})["echo"], 7);
  EXPECT_EQ(runner_->standby_runs(), 0);
}

// The real standby (`python -m nova_worker.standby`, torch imported ahead) runs a stage as
// `python -m nova_worker.validate ARGS.json` does: here a request missing its reference, which both
// refuse with the same message.
TEST(WorkerRunnerStandby, TheRealStandbyRunsTheStageAsAFreshWorkerDoes) {
  std::string python = Settings{}.resolved_python();
  if (!test::has_torch(python)) GTEST_SKIP() << python << " has no torch";
  auto dir = test::scratch_dir("worker_runner_standby");
  auto failure = [&](ChildProcessWorkerRunner& runner) {
    try {
      runner.run("validate", {{"trials", 1}}, WorkerCall{});
    } catch (const WorkerRunError& e) {
      EXPECT_EQ(e.kind(), WorkerRunError::Kind::Failed);
      return std::string(e.what());
    }
    ADD_FAILURE() << "no error";
    return std::string();
  };
  ChildProcessWorkerRunner fresh(python, dir / "fresh");
  ChildProcessWorkerRunner standby(python, dir / "standby");
  standby.keep_standby(true);
  std::string expected = failure(fresh);
  EXPECT_NE(expected.find("worker failed while running validate"), std::string::npos) << expected;
  EXPECT_EQ(failure(standby), expected);
  EXPECT_EQ(standby.standby_runs(), 1);
  EXPECT_EQ(fresh.standby_runs(), 0);
}

}  // namespace
}  // namespace nova
