// The engine's session (core/session) with a scripted worker runner in place of Python: intake stores
// the graph, generation stores every group's versions, an evaluation by version id stores its results
// (no front end in between), and the job mechanics hold: a crash is a result, a cancel stores nothing,
// a newer request supersedes an older one, and GPU jobs spread over several devices with a benchmark
// alone on its device. The worker answers are recorded on the H200 (tests/fixtures).
#include "core/session/project_session.h"

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

#include "core/session/stored_generation.h"
#include "core/jobs/worker_run_error.h"
#include "core/session/optimization_run.h"
#include "core/session/project_evidence.h"
#include "support/graph_fixtures.h"
#include "support/recorded_results.h"
#include "support/test_paths.h"

namespace nova {
namespace {
using nlohmann::json;
using namespace std::chrono_literals;

json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  EXPECT_TRUE(in) << "missing fixture " << p;
  return json::parse(in);
}

// The worker's validate answer recorded on the H200 for mlp_block g1 (it failed: cuBLAS mm sums in
// another order than eager's addmm), and the same answer as a pass.
json failed_validation() { return test::recorded_validation(false); }
json passed_validation() { return test::recorded_validation(true); }
json recorded_bench() { return read_json(test::fixtures_dir() / "bench" / "matmul_scaling_residual_add_g0.h200.json"); }

// A WorkerRunner that answers from a script instead of starting Python.
class ScriptedRunner : public WorkerRunner {
 public:
  using Script = std::function<json(const std::string& cmd, const json& args, const WorkerCall& call)>;
  explicit ScriptedRunner(Script script) : script_(std::move(script)) {}
  json run(const std::string& cmd, const json& args, const WorkerCall& call) override {
    {
      std::lock_guard lock(mutex_);
      commands_.push_back(cmd);
    }
    return script_(cmd, args, call);
  }
  std::vector<std::string> commands() const {
    std::lock_guard lock(mutex_);
    return commands_;
  }

 private:
  Script script_;
  mutable std::mutex mutex_;
  std::vector<std::string> commands_;
};

// Waits for the call's cancel (as a real runner ends its worker) or gives up after `limit`.
json wait_for_cancel(const WorkerCall& call, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!call.cancel.cancelled() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  throw WorkerRunError(WorkerRunError::Kind::Cancelled, "cancelled while validating");
}

struct SessionFixture : ::testing::Test {
  std::filesystem::path model = test::shared_examples_dir() / "matmul_scaling_residual_add.py";
  ModelGraph graph = test::graph_fixture("matmul_scaling_residual_add");

  std::unique_ptr<ProjectSession> open(ScriptedRunner::Script script, int gpus = 1, ScriptedRunner** runner = nullptr) {
    SessionOptions o;
    o.model = model;
    o.project = test::scratch_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    o.python = "python3";  // never started: the runner is scripted
    o.gpus = gpus;
    auto r = std::make_unique<ScriptedRunner>(std::move(script));
    if (runner) *runner = r.get();
    return std::make_unique<ProjectSession>(o, std::move(r));
  }
  // Imports the recorded graph and generates; the first group's primary version.
  std::int64_t generated(ProjectSession& s) {
    s.import_graph(graph);
    JobInfo info = s.wait(s.generate());
    EXPECT_EQ(info.state, JobState::Succeeded) << info.error;
    return info.result["primary"][0].get<std::int64_t>();
  }
};

TEST_F(SessionFixture, IntakeStoresTheGraphAndTheModelText) {
  auto s = open([&](const std::string& cmd, const json& args, const WorkerCall&) {
    EXPECT_EQ(cmd, "intake");
    EXPECT_EQ(args["model"], std::filesystem::absolute(model).string());
    return json(graph);
  });
  EXPECT_FALSE(s->graph());
  EXPECT_FALSE(s->model_unchanged());
  JobInfo info = s->wait(s->intake());
  ASSERT_EQ(info.state, JobState::Succeeded) << info.error;
  EXPECT_EQ(info.result["groups"], graph.groups.size());
  ASSERT_TRUE(s->graph());
  EXPECT_EQ(s->graph()->groups.size(), graph.groups.size());
  EXPECT_TRUE(s->model_unchanged());
  // Reopening the project (a later `nova status`, the studio) finds the same graph.
  ProjectStore again = ProjectStore::open(s->project_dir());
  ASSERT_TRUE(again.model());
  EXPECT_EQ(json::parse(again.model()->graph_json).get<ModelGraph>().groups, s->graph()->groups);
}

// The intake's result names the part of its time spent waiting for the worker to start (Python and torch,
// once a session), so the model's own capture time can be told from the session's start.
TEST_F(SessionFixture, IntakeNamesTheTimeItWaitedForTheWorkerToStart) {
  auto s = open([&](const std::string&, const json&, const WorkerCall& call) {
    EXPECT_TRUE(call.started);
    if (call.started) call.started(7.5);
    return json(graph);
  });
  JobInfo info = s->wait(s->intake());
  ASSERT_EQ(info.state, JobState::Succeeded) << info.error;
  EXPECT_DOUBLE_EQ(info.result.value("worker_start_seconds", -1.0), 7.5);
  EXPECT_GE(info.result.value("seconds", -1.0), 0.0);
}

// `nova optimize`'s intake line names that wait too.
TEST_F(SessionFixture, AnOptimizationRunsIntakeLineNamesTheWorkersStart) {
  auto s = open([&](const std::string& cmd, const json&, const WorkerCall& call) -> json {
    if (cmd == "intake") {
      call.started(7.5);
      return json(graph);
    }
    if (cmd == "validate") return passed_validation();
    if (cmd == "bench") return recorded_bench();
    ADD_FAILURE() << "unexpected command " << cmd;
    return {};
  });
  std::vector<std::string> said;
  OptimizationRun(*s, OptimizationOptions{}, [&](const std::string& l) { said.push_back(l); }).run();
  const auto line = std::find_if(said.begin(), said.end(), [](const std::string& l) { return l.rfind("intake: 5 nodes", 0) == 0; });
  ASSERT_NE(line, said.end()) << fmt::format("{}", fmt::join(said, "\n"));
  EXPECT_NE(line->find(" s (7.5 s of it waiting for the worker to start: Python and torch)"), std::string::npos) << *line;
}

TEST_F(SessionFixture, AFailedIntakeStoresNothingAndSaysWhy) {
  auto s = open([](const std::string&, const json&, const WorkerCall&) -> json {
    throw WorkerRunError(WorkerRunError::Kind::Failed, "worker failed while capturing: NameError: name 'x' is not defined");
  });
  JobInfo info = s->wait(s->intake());
  EXPECT_EQ(info.state, JobState::Failed);
  EXPECT_NE(info.error.find("NameError"), std::string::npos) << info.error;
  EXPECT_FALSE(s->graph());
}

TEST_F(SessionFixture, GenerationStoresEveryGroupAndRunsOnlyForWhatIsMissing) {
  auto s = open([](const std::string&, const json&, const WorkerCall&) -> json { return {}; });
  s->import_graph(graph);
  JobInfo first = s->wait(s->generate());
  ASSERT_EQ(first.state, JobState::Succeeded) << first.error;
  EXPECT_EQ(first.result["groups"], graph.groups.size());
  EXPECT_GE(first.result["added"].get<int>(), 1);
  EXPECT_EQ(stored_groups(s->store()).size(), graph.groups.size());
  // Nothing changed: the second run generates nothing and adds no version.
  JobInfo second = s->wait(s->generate());
  ASSERT_EQ(second.state, JobState::Succeeded) << second.error;
  EXPECT_EQ(second.result["groups"], 0);
  EXPECT_EQ(second.result["added"], 0);
}

// A project whose storing a kill cut short (before generations were one transaction) or whose WAL
// was damaged holds a group record without versions: the next generation says so and generates it.
TEST_F(SessionFixture, AGroupThatLostItsVersionsIsGeneratedAgainAndSaid) {
  auto noop = [](const std::string&, const json&, const WorkerCall&) -> json { return {}; };
  auto s = open(noop);
  s->import_graph(graph);
  ASSERT_EQ(s->wait(s->generate()).state, JobState::Succeeded);
  const auto project = s->project_dir();
  s.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((project / ProjectStore::kFileName).c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "DELETE FROM results WHERE version_id IN (SELECT id FROM candidate_versions);"
                         "DELETE FROM candidate_versions;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  SessionOptions o;
  o.model = model;
  o.project = project;
  o.python = "python3";
  ProjectSession again(o, std::make_unique<ScriptedRunner>(noop));
  ASSERT_EQ(missing_groups(again.store(), graph).groups.size(), graph.groups.size());
  JobInfo info = again.wait(again.generate());
  ASSERT_EQ(info.state, JobState::Succeeded) << info.error;
  EXPECT_EQ(info.result["groups"], graph.groups.size());
  EXPECT_GE(info.result["added"].get<int>(), 1);
  const std::string said = fmt::format("the project holds 0 of the model's {} fusion groups", graph.groups.size());
  EXPECT_TRUE(std::any_of(info.log.begin(), info.log.end(),
                          [&](const std::string& l) { return l.find(said) != std::string::npos; }))
      << json(info.log).dump();
  EXPECT_NE(info.result["missing"].get<std::string>().find(said), std::string::npos) << info.result.dump();
  EXPECT_TRUE(missing_groups(again.store(), graph).groups.empty());
  EXPECT_EQ(stored_groups(again.store()).size(), graph.groups.size());  // the same records, not new ones
}

TEST_F(SessionFixture, AnEvaluationStoresItsResultsAndTheSelectionShipsIt) {
  auto s = open([](const std::string& cmd, const json& args, const WorkerCall&) -> json {
    EXPECT_TRUE(args.contains("cubin") || args.contains("candidate"));
    if (cmd == "evaluate") return {{"validation", passed_validation()}, {"benchmark", recorded_bench()}};
    ADD_FAILURE() << "unexpected command " << cmd;
    return {};
  });
  const std::int64_t v = generated(*s);
  JobInfo info = s->wait(s->evaluate(v));
  ASSERT_EQ(info.state, JobState::Succeeded) << info.error;
  EXPECT_EQ(info.lane, JobLane::Gpu);
  EXPECT_EQ(info.device, 0);
  // Stored by the session, read back typed.
  auto validation = ProjectEvidence::latest_validation(s->store(), v);
  auto bench = ProjectEvidence::latest_benchmark(s->store(), v);
  ASSERT_TRUE(validation && bench);
  EXPECT_TRUE(validation->passed);
  EXPECT_EQ(bench->verdict.kind, VerdictKind::ships);
  EXPECT_EQ(bench->environment["lane_device"], 0);
  CandidateVersion stored = s->store().version(v);
  EXPECT_EQ(stored.correct, true);
  EXPECT_EQ(stored.verdict, VerdictKind::ships);
  Selection sel = s->selection();
  ASSERT_EQ(sel.groups.size(), graph.groups.size());
  EXPECT_EQ(sel.groups[0].outcome, GroupOutcome::ships);
  EXPECT_EQ(sel.groups[0].chosen, v);
}

TEST_F(SessionFixture, AWorkerCrashIsAStoredResultAndTheNextEvaluationRuns) {
  std::atomic<int> calls{0};
  auto s = open([&](const std::string& cmd, const json&, const WorkerCall&) -> json {
    if (calls++ == 0) throw WorkerRunError(WorkerRunError::Kind::Crashed, "worker crashed: SIGSEGV while validating v1");
    EXPECT_EQ(cmd, "validate");
    return passed_validation();
  });
  const std::int64_t v = generated(*s);
  EvaluateOptions validate;
  validate.steps = EvaluateOptions::Steps::validate;
  JobInfo crashed = s->wait(s->evaluate(v, validate));
  ASSERT_EQ(crashed.state, JobState::Succeeded) << crashed.error;  // the job ran; the candidate crashed
  auto stored = ProjectEvidence::latest_validation(s->store(), v);
  ASSERT_TRUE(stored);
  EXPECT_FALSE(stored->passed);
  EXPECT_NE(stored->verdict.find("SIGSEGV"), std::string::npos) << stored->verdict;
  JobInfo next = s->wait(s->evaluate(v, validate));
  ASSERT_EQ(next.state, JobState::Succeeded) << next.error;
  EXPECT_TRUE(ProjectEvidence::latest_validation(s->store(), v)->passed);
  EXPECT_EQ(s->store().results(v).size(), 2u);
}

// A run stopped after validation (killed, out of time) resumes: the next `nova optimize` benchmarks
// what passed without validating it again.
TEST_F(SessionFixture, AnOptimizationRunResumesWithTheBenchmarkOfWhatPassed) {
  std::atomic<bool> stopped{true};
  ScriptedRunner* runner = nullptr;
  auto s = open(
      [&](const std::string& cmd, const json&, const WorkerCall&) -> json {
        if (cmd == "validate") return passed_validation();
        if (cmd == "bench" && stopped) throw WorkerRunError(WorkerRunError::Kind::Cancelled, "stopped while benchmarking");
        if (cmd == "bench") return recorded_bench();
        ADD_FAILURE() << "unexpected command " << cmd;
        return {};
      },
      1, &runner);
  OptimizationOptions o;
  o.graph = graph;
  OptimizationReport first = OptimizationRun(*s, o).run();
  EXPECT_EQ(first.passed, 1);
  EXPECT_EQ(first.benchmarked, 0);
  ASSERT_EQ(first.selection.groups.size(), 1u);
  EXPECT_EQ(first.selection.groups[0].outcome, GroupOutcome::unmeasured);

  stopped = false;
  const std::size_t before = runner->commands().size();
  std::vector<std::string> said;
  OptimizationReport second = OptimizationRun(*s, o, [&](const std::string& l) { said.push_back(l); }).run();
  std::vector<std::string> commands = runner->commands();
  EXPECT_EQ(std::vector<std::string>(commands.begin() + before, commands.end()), std::vector<std::string>{"bench"});
  EXPECT_EQ(second.evaluated, 0);
  EXPECT_EQ(second.benchmarked, 1);
  EXPECT_EQ(second.selection.groups[0].outcome, GroupOutcome::ships);
  EXPECT_NE(std::find(said.begin(), said.end(),
                      "evaluate: 0 version(s) to validate, 1 validated earlier still to benchmark"),
            said.end());
}

// A validation that ended without the worker's answer (here the harness's own AttributeError, as on
// the H200 once) taught nothing about the candidate: the next run validates it again. One that the
// worker answered (passed or failed) is final until --remeasure.
TEST_F(SessionFixture, AnOptimizationRunValidatesAgainWhatTheWorkerNeverAnswered) {
  std::atomic<int> validations{0};
  auto s = open([&](const std::string& cmd, const json&, const WorkerCall&) -> json {
    if (cmd == "validate" && validations++ == 0)
      throw WorkerRunError(WorkerRunError::Kind::Failed,
                           "worker failed while evaluating candidate v1: AttributeError: 'str' object has no "
                           "attribute 'instantiate'");
    if (cmd == "validate") {
      json answer = failed_validation();
      answer["passed"] = false;
      answer["failures"] = {"output 0: max abs error 0.25 exceeds tolerance 1e-4"};
      answer["trials"][0]["ok"] = false;
      return answer;
    }
    ADD_FAILURE() << "unexpected command " << cmd;
    return {};
  });
  OptimizationOptions o;
  o.graph = graph;
  OptimizationReport first = OptimizationRun(*s, o).run();
  EXPECT_EQ(first.passed, 0);
  ASSERT_EQ(first.failures.size(), 1u);
  EXPECT_NE(first.failures[0].find("AttributeError"), std::string::npos) << first.failures[0];

  std::vector<std::string> said;
  OptimizationReport second = OptimizationRun(*s, o, [&](const std::string& l) { said.push_back(l); }).run();
  EXPECT_EQ(validations.load(), 2);
  EXPECT_EQ(second.evaluated, 1);
  EXPECT_NE(std::find(said.begin(), said.end(),
                      "evaluate: 1 version(s) to validate (1 again: their last validation ended without the "
                      "worker's answer)"),
            said.end());
  // The worker answered this time (a failed validation): a third run has nothing to do.
  OptimizationReport third = OptimizationRun(*s, o).run();
  EXPECT_EQ(validations.load(), 2);
  EXPECT_EQ(third.evaluated, 0);
  EXPECT_EQ(third.selection.groups[0].outcome, GroupOutcome::failed);
}

// A trace recorded by `nova profile` on its own is kept in the project: copied under traces/ (the
// original may be a temporary file) and recorded, so the studio finds it.
TEST_F(SessionFixture, ATraceRecordedElsewhereIsCopiedIntoTheProjectAndRecorded) {
  auto s = open([](const std::string& cmd, const json&, const WorkerCall&) -> json {
    ADD_FAILURE() << "unexpected command " << cmd;
    return {};
  });
  const auto recorded = test::fixtures_dir() / "traces" / "conv2d_min_add_multiply.novatrace";
  ASSERT_TRUE(std::filesystem::is_regular_file(recorded)) << "missing fixture " << recorded;
  const std::int64_t id = s->add_trace_file(recorded);
  auto traces = s->store().traces();
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(traces[0].id, id);
  EXPECT_EQ(traces[0].kind, "cupti");
  const std::filesystem::path kept = traces[0].path;
  EXPECT_EQ(kept.parent_path(), s->project_dir() / "traces");
  EXPECT_EQ(std::filesystem::file_size(kept), std::filesystem::file_size(recorded));
  EXPECT_THROW(s->add_trace_file(s->project_dir() / "no-such.novatrace"), std::runtime_error);
  EXPECT_EQ(s->store().traces().size(), 1u);
}

TEST_F(SessionFixture, ACancelledEvaluationStoresNothing) {
  std::atomic<bool> started{false};
  auto s = open([&](const std::string&, const json&, const WorkerCall& call) -> json {
    started = true;
    return wait_for_cancel(call, 10s);
  });
  const std::int64_t v = generated(*s);
  int build = s->evaluate(v);
  JobInfo built = s->jobs().wait(build, 60s).value();
  ASSERT_EQ(built.state, JobState::Succeeded) << built.error;
  const int gpu = built.result["gpu_job"].get<int>();
  while (!started) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(s->jobs().cancel(gpu));
  JobInfo info = s->wait(gpu);
  EXPECT_EQ(info.state, JobState::Cancelled);
  EXPECT_TRUE(s->store().results(v).empty());
}

TEST_F(SessionFixture, ANewerRequestForAVersionSupersedesTheOlderOne) {
  std::atomic<int> calls{0};
  auto s = open([&](const std::string&, const json&, const WorkerCall& call) -> json {
    if (calls++ == 0) return wait_for_cancel(call, 10s);  // the first request is still running
    return passed_validation();
  });
  const std::int64_t v = generated(*s);
  EvaluateOptions validate;
  validate.steps = EvaluateOptions::Steps::validate;
  int first_build = s->evaluate(v, validate);
  JobInfo first_built = s->jobs().wait(first_build, 60s).value();
  const int first_gpu = first_built.result["gpu_job"].get<int>();
  while (calls == 0) std::this_thread::sleep_for(5ms);
  JobInfo second = s->wait(s->evaluate(v, validate));
  ASSERT_EQ(second.state, JobState::Succeeded) << second.error;
  // The first request ends once its worker sees the cancel (up to 5 ms later, which the second one,
  // with nothing left to build, need not wait for): it ends superseded, whenever that is.
  EXPECT_EQ(s->wait(first_gpu).state, JobState::Superseded);
  ASSERT_EQ(s->store().results(v).size(), 1u);  // the superseded run stored nothing
  EXPECT_TRUE(ProjectEvidence::latest_validation(s->store(), v)->passed);
}

TEST_F(SessionFixture, GpuJobsSpreadOverDevicesAndABenchmarkRunsAloneOnItsDevice) {
  std::mutex m;
  std::map<int, int> running;  // job id -> device, while running
  int max_exclusive_per_device = 0;
  bool overlap_with_bench = false;
  std::set<int> devices_used;
  std::map<int, JobLane> lanes;
  auto s = open(
      [&](const std::string& cmd, const json&, const WorkerCall&) -> json {
        std::this_thread::sleep_for(150ms);
        return cmd == "bench" ? recorded_bench() : passed_validation();
      },
      2);
  s->set_listener([&](const JobInfo& info) {
    if (info.lane == JobLane::Cpu) return;
    std::lock_guard lock(m);
    lanes[info.id] = info.lane;
    if (info.state == JobState::Running) {
      running[info.id] = info.device;
      devices_used.insert(info.device);
      std::map<int, int> exclusive, shared;
      for (auto [id, device] : running) (lanes[id] == JobLane::Gpu ? exclusive : shared)[device]++;
      for (auto [device, n] : exclusive) {
        max_exclusive_per_device = std::max(max_exclusive_per_device, n);
        if (shared[device] > 0) overlap_with_bench = true;
      }
    } else if (is_finished(info.state)) {
      running.erase(info.id);
    }
  });
  const std::int64_t v = generated(*s);
  EvaluateOptions validate, bench;
  validate.steps = EvaluateOptions::Steps::validate;
  bench.steps = EvaluateOptions::Steps::bench;
  // Distinct versions (user edits of the same kernel) so that no request supersedes another.
  std::vector<std::int64_t> versions{v};
  for (int i = 0; i < 5; ++i)
    versions.push_back(s->store().add_user_edit(v, s->store().version(v).source + "\n// edit " + std::to_string(i)));
  std::vector<int> jobs;
  for (std::size_t i = 0; i < versions.size(); ++i)
    jobs.push_back(s->evaluate(versions[i], i % 2 ? bench : validate));
  for (int j : jobs) EXPECT_EQ(s->wait(j).state, JobState::Succeeded);
  std::lock_guard lock(m);
  EXPECT_EQ(devices_used, (std::set<int>{0, 1}));
  EXPECT_EQ(max_exclusive_per_device, 1);
  EXPECT_FALSE(overlap_with_bench);
}

}  // namespace
}  // namespace nova
