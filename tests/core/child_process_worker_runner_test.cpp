// Worker commands in one-shot worker processes over the worker protocol: the result, progress and
// log; a crash reported by signal name; the watchdog ending a sleeping worker; typed errors (the
// worker's own, the user's with file and line); a worker of another protocol version; cancel
// honoured at a safe point or enforced by ending the process; the job queue carrying a crash as a
// plain failure while the next job runs; the same through standby workers started ahead, and the
// real nova_worker standby answering as a fresh worker does.
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
    // The real worker's request loop (nova_worker.server) with a command table of its own and a
    // quick preload. `--preload` (a standby) exits at once while `no_standby` exists.
    std::ofstream(pkg / "__main__.py") << R"(import os, signal, sys, time
from nova_worker import server
from nova_worker.protocol import WorkerFailure

def ok(args, progress):
    progress("halfway", 0.5)
    print("a line for the log", file=sys.stderr, flush=True)
    return {"echo": args["x"]}

def sleep(args, progress):
    progress("sleeping")
    for _ in range(6000):
        if args.get("honour_cancel", True):
            progress.check()
        time.sleep(0.01)
    return {}

def crash(args, progress):
    os.kill(os.getpid(), signal.SIGSEGV)

def fail(args, progress):
    raise WorkerFailure("internal", "CUDA error: out of memory")

def argv(args, progress):
    return {"argv": sys.argv[1:]}

def leave(args, progress):
    print("giving up without an answer", file=sys.stderr, flush=True)
    os._exit(1)

if "--preload" in sys.argv and os.path.exists(os.path.join(os.path.dirname(__file__), "no_standby")):
    sys.exit(3)
sys.exit(server.main(commands={"ok": ok, "sleep": sleep, "crash": crash, "fail": fail, "leave": leave,
                               "argv": argv},
                     preload_imports=lambda profile: time.sleep(0.2)))
)";
    runner_ = std::make_unique<ChildProcessWorkerRunner>(Settings{}.resolved_python(), dir_ / "work");
    runner_->add_python_path(dir_);
    runner_->set_module_prefix("fake_worker.");
  }

  // The WorkerRunError a command ends with.
  WorkerRunError failure(const std::string& cmd, const nlohmann::json& args, const WorkerCall& call) {
    try {
      runner_->run(cmd, args, call);
    } catch (const WorkerRunError& e) {
      return e;
    }
    ADD_FAILURE() << cmd << " gave a result";
    return WorkerRunError(WorkerRunError::Kind::Failed, "");
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
  EXPECT_TRUE(r.contains("process_s"));  // a one-shot worker's timings
  EXPECT_EQ(progress, std::vector<std::string>{"halfway"});
  EXPECT_NE(std::find(log.begin(), log.end(), "a line for the log"), log.end());
}

TEST_F(WorkerRunnerTest, ACrashIsReportedBySignalNameAndWhatTheWorkerWasDoing) {
  WorkerCall call;
  call.doing = "validating candidate 3";
  WorkerRunError e = failure("crash", {}, call);
  EXPECT_EQ(e.kind(), WorkerRunError::Kind::Crashed);
  EXPECT_STREQ(e.what(), "worker crashed: SIGSEGV while validating candidate 3");
}

TEST_F(WorkerRunnerTest, AWorkerThatExitsWithoutAnAnswerFailsWithItsLastWords) {
  WorkerRunError e = failure("leave", {}, WorkerCall{});
  EXPECT_EQ(e.kind(), WorkerRunError::Kind::Failed);
  EXPECT_NE(std::string(e.what()).find("exited (exit code 1) without an answer while running leave: "
                                       "giving up without an answer"),
            std::string::npos)
      << e.what();
}

TEST_F(WorkerRunnerTest, TheWatchdogEndsASleepingWorkerPastItsBudget) {
  WorkerCall call;
  call.budget = 1500ms;
  call.doing = "benchmarking candidate 7";
  auto t0 = std::chrono::steady_clock::now();
  WorkerRunError e = failure("sleep", {{"honour_cancel", false}}, call);
  EXPECT_EQ(e.kind(), WorkerRunError::Kind::TimedOut);
  EXPECT_NE(std::string(e.what()).find("over its budget of 2 s while benchmarking candidate 7"), std::string::npos)
      << e.what();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST_F(WorkerRunnerTest, AnErrorTheWorkerReportsKeepsItsKind) {
  WorkerRunError e = failure("fail", {}, WorkerCall{});
  EXPECT_EQ(e.kind(), WorkerRunError::Kind::Internal);
  EXPECT_STREQ(e.what(), "worker failed while running fail: CUDA error: out of memory");
  WorkerRunError unknown = failure("no_such_command", {}, WorkerCall{});
  EXPECT_EQ(unknown.kind(), WorkerRunError::Kind::BadRequest);
  EXPECT_NE(std::string(unknown.what()).find("unknown command 'no_such_command'"), std::string::npos);
}

TEST_F(WorkerRunnerTest, ACancelIsHonouredAtTheWorkersNextSafePoint) {
  WorkerCall call;
  call.doing = "validating candidate 5";
  std::optional<std::chrono::steady_clock::time_point> cancelled_at;
  call.progress = [&](const std::string& m, std::optional<double>) {  // the request is running
    EXPECT_EQ(m, "sleeping");
    cancelled_at = std::chrono::steady_clock::now();
    call.cancel.cancel("cancelled by the user");
  };
  WorkerRunError e = failure("sleep", {}, call);
  ASSERT_TRUE(cancelled_at);
  EXPECT_EQ(e.kind(), WorkerRunError::Kind::Cancelled);
  EXPECT_STREQ(e.what(), "cancelled by the user while validating candidate 5");
  EXPECT_LT(std::chrono::steady_clock::now() - *cancelled_at, 2s);  // no grace period waited out
}

TEST_F(WorkerRunnerTest, AWorkerThatIgnoresTheCancelIsEndedAfterTheGrace) {
  WorkerCall call;
  std::optional<std::chrono::steady_clock::time_point> cancelled_at;
  call.progress = [&](const std::string&, std::optional<double>) {
    cancelled_at = std::chrono::steady_clock::now();
    call.cancel.cancel("superseded");
  };
  WorkerRunError e = failure("sleep", {{"honour_cancel", false}}, call);
  ASSERT_TRUE(cancelled_at);
  auto took = std::chrono::steady_clock::now() - *cancelled_at;
  EXPECT_EQ(e.kind(), WorkerRunError::Kind::Cancelled);
  EXPECT_STREQ(e.what(), "superseded while running sleep");
  EXPECT_GE(took, 3s);  // the grace period
  EXPECT_LT(took, 8s);
}

TEST_F(WorkerRunnerTest, AWorkerOfAnotherProtocolVersionIsRefusedNamingBoth) {
  auto pkg = dir_ / "old_worker";
  std::filesystem::create_directories(pkg);
  std::ofstream(pkg / "__init__.py") << "";
  std::ofstream(pkg / "__main__.py") << "import json, time\nprint(json.dumps({'type': 'hello', 'protocol': 1}), "
                                        "flush=True)\ntime.sleep(30)\n";
  runner_->set_module_prefix("old_worker.");
  auto t0 = std::chrono::steady_clock::now();
  WorkerRunError e = failure("ok", {{"x", 1}}, WorkerCall{});
  EXPECT_EQ(e.kind(), WorkerRunError::Kind::Protocol);
  EXPECT_NE(std::string(e.what()).find("speaks protocol 1, this Nova speaks 2"), std::string::npos) << e.what();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
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
  WorkerCall call;
  call.doing = "validating candidate 4";
  WorkerRunError e = failure("crash", {}, call);
  EXPECT_EQ(e.kind(), WorkerRunError::Kind::Crashed);
  EXPECT_STREQ(e.what(), "worker crashed: SIGSEGV while validating candidate 4");
  EXPECT_EQ(runner_->standby_runs(), 4);
  EXPECT_EQ(runner_->run("ok", {{"x", 5}}, WorkerCall{})["echo"], 5);  // the crash took only its own
}

// A call is told how long it waited for its worker to say hello: a fresh worker's start (here its 0.2 s
// preload is skipped, so Python alone), and about nothing for a standby that was ready when the command came.
TEST_F(WorkerRunnerTest, ACallIsToldHowLongItWaitedForItsWorkerToStart) {
  std::vector<double> waited;
  WorkerCall call;
  call.started = [&](double s) { waited.push_back(s); };
  EXPECT_EQ(runner_->run("ok", {{"x", 1}}, call)["echo"], 1);
  ASSERT_EQ(waited.size(), 1u);
  EXPECT_GT(waited[0], 0.01);  // a Python process started and imported the worker's modules
  runner_->keep_standby(true);
  std::this_thread::sleep_for(3000ms);  // the standby's Python, its 0.2 s preload and its hello
  EXPECT_EQ(runner_->run("ok", {{"x", 2}}, call)["echo"], 2);
  ASSERT_EQ(waited.size(), 2u);
  EXPECT_LT(waited[1], 0.05);
  EXPECT_LT(waited[1], waited[0]);
  EXPECT_EQ(runner_->standby_runs(), 1);
  runner_->keep_standby(false);
}

// One standby per GPU lane: two commands that start together each find a worker started ahead.
TEST_F(WorkerRunnerTest, LanesThatStartTogetherEachTakeAStandby) {
  runner_->keep_standby(true, 2);
  EXPECT_EQ(runner_->standbys_waiting(), 2);
  std::vector<std::thread> lanes;
  std::vector<int> echoed(2, 0);
  for (int lane = 0; lane < 2; ++lane)
    lanes.emplace_back([&, lane] { echoed[lane] = runner_->run("ok", {{"x", lane + 1}}, WorkerCall{})["echo"]; });
  for (auto& t : lanes) t.join();
  EXPECT_EQ(echoed, (std::vector<int>{1, 2}));
  EXPECT_EQ(runner_->standby_runs(), 2);
  EXPECT_EQ(runner_->standbys_waiting(), 2);  // two more were started in their place
  lanes.clear();
  for (int lane = 0; lane < 2; ++lane)
    lanes.emplace_back([&, lane] { echoed[lane] = runner_->run("ok", {{"x", lane + 3}}, WorkerCall{})["echo"]; });
  for (auto& t : lanes) t.join();
  EXPECT_EQ(runner_->standby_runs(), 4);
  runner_->keep_standby(false);
  EXPECT_EQ(runner_->standbys_waiting(), 0);
}

// A session whose first command is its intake starts its first standby with intake's preload only; the
// standby started in its place preloads fully (validation and benchmarks import torch.compile's stack).
TEST_F(WorkerRunnerTest, TheFirstStandbysPreloadCanBeIntakesAndTheNextOnesAreFull) {
  runner_->keep_standby(true, 1, "intake");
  EXPECT_EQ(runner_->run("argv", {}, WorkerCall{})["argv"], (nlohmann::json{"--once", "--preload=intake"}));
  EXPECT_EQ(runner_->run("argv", {}, WorkerCall{})["argv"], (nlohmann::json{"--once", "--preload"}));
  EXPECT_EQ(runner_->standby_runs(), 2);
  runner_->keep_standby(false);
  EXPECT_EQ(runner_->run("argv", {}, WorkerCall{})["argv"], (nlohmann::json{"--once"}));  // a fresh worker
  // Two lanes: one intake, so only the first standby has intake's preload.
  runner_->keep_standby(true, 2, "intake");
  EXPECT_EQ(runner_->run("argv", {}, WorkerCall{})["argv"], (nlohmann::json{"--once", "--preload=intake"}));
  EXPECT_EQ(runner_->run("argv", {}, WorkerCall{})["argv"], (nlohmann::json{"--once", "--preload"}));
  runner_->keep_standby(false);
}

TEST_F(WorkerRunnerTest, AStandbyThatDiedWaitingIsReplacedByAFreshProcess) {
  std::ofstream(dir_ / "fake_worker" / "no_standby") << "";
  runner_->keep_standby(true);
  std::this_thread::sleep_for(1000ms);  // the standby exits (code 3) before the command comes
  EXPECT_EQ(runner_->run("ok", {{"x", 7}}, WorkerCall{})["echo"], 7);
  EXPECT_EQ(runner_->standby_runs(), 0);
}

// The real worker: the standby (`python -m nova_worker --once --preload`, torch imported ahead)
// answers as a fresh one-shot worker does, here with the user's error in a model, by file and line.
TEST(WorkerRunnerStandby, TheRealStandbyAnswersAsAFreshWorkerDoes) {
  std::string python = Settings{}.resolved_python();
  if (!test::has_torch(python)) GTEST_SKIP() << python << " has no torch";
  auto dir = test::scratch_dir("worker_runner_standby");
  auto model = dir / "bad_init.py";
  std::ofstream(model) << "import torch\n\n\ndef get_init_inputs():\n    return [1 / 0]\n\n\n"
                          "def get_inputs():\n    return [torch.ones(1)]\n\n\nclass Model(torch.nn.Module):\n    pass\n";
  auto failure = [&](ChildProcessWorkerRunner& runner) {
    try {
      runner.run("intake", {{"model", model.string()}}, WorkerCall{});
    } catch (const WorkerRunError& e) {
      EXPECT_EQ(e.kind(), WorkerRunError::Kind::UserError) << e.what();
      EXPECT_EQ(e.file(), model.string());
      EXPECT_EQ(e.line(), 5);
      return std::string(e.what());
    }
    ADD_FAILURE() << "no error";
    return std::string();
  };
  ChildProcessWorkerRunner fresh(python, dir / "fresh");
  ChildProcessWorkerRunner standby(python, dir / "standby");
  standby.keep_standby(true);
  std::string expected = failure(fresh);
  EXPECT_NE(expected.find("get_init_inputs() raised ZeroDivisionError: division by zero (bad_init.py:5)"),
            std::string::npos)
      << expected;
  EXPECT_EQ(failure(standby), expected);
  EXPECT_EQ(standby.standby_runs(), 1);
  EXPECT_EQ(fresh.standby_runs(), 0);
}

}  // namespace
}  // namespace nova
