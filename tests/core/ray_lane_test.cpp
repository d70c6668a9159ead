// The Ray lane from core's side: ChildProcessWorkerRunner with a Ray cluster set sends GPU commands to
// a real cluster of this machine (a head and two nodes on loopback, one logical GPU each, started by
// tests/support/ray_cluster.py), through the job queue's GPU lanes as a session runs evaluations, and
// the queue writes each finished job into the results folder. A worker node is killed while the jobs
// run: every job still finishes, and the results folder holds each one exactly once. The evaluations
// are the worker's test command `_where` (where it ran, after a sleep): scheduled as a GPU task, it
// needs no GPU.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/env/resource_paths.h"
#include "core/env/settings.h"
#include "core/jobs/child_process_worker_runner.h"
#include "core/jobs/job_queue.h"
#include "core/jobs/job_worker_call.h"
#include "core/jobs/ray_cluster.h"
#include "core/jobs/worker_run_error.h"
#include "core/worker/child_process.h"
#include "support/test_paths.h"

namespace nova {
namespace {

using namespace std::chrono_literals;

// The cluster, up for the test that owns it; shut down when it goes.
class LocalRayCluster {
 public:
  LocalRayCluster() {
    auto env = ChildProcess::minimal_env();
    env["PYTHONDONTWRITEBYTECODE"] = "1";
    const auto script = test::fixtures_dir().parent_path() / "support" / "ray_cluster.py";
    proc_.start({Settings{}.resolved_python(), script.string()}, env);
    auto line = read("address ", 240s);
    address_ = line.substr(std::string("address ").size());
  }
  ~LocalRayCluster() {
    proc_.close_stdin();
    if (!proc_.wait(60s)) proc_.terminate(5s);
  }
  const std::string& address() const { return address_; }
  // Kills a worker node without draining it; returns its node id.
  std::string kill_a_node() {
    proc_.write_stdin("kill\n");
    return read("killed ", 120s).substr(std::string("killed ").size());
  }

 private:
  std::string read(const std::string& prefix, std::chrono::seconds budget) {
    const auto until = std::chrono::steady_clock::now() + budget;
    while (std::chrono::steady_clock::now() < until) {
      auto line = proc_.read_line(1s);
      if (line && line->rfind(prefix, 0) == 0) return *line;
      if (proc_.eof()) break;
    }
    throw std::runtime_error(fmt::format("the test's Ray cluster said no '{}' line: {}", prefix,
                                         proc_.stderr_text().substr(0, 3000)));
  }
  ChildProcess proc_;
  std::string address_;
};

TEST(RayLane, EveryEvaluationComesBackOnceWhenANodeDiesMidRun) {
  LocalRayCluster cluster;

  // What `nova optimize --ray` asks first: three GPUs on three live nodes; the probe task found no CUDA
  // device there (logical GPUs) and says so.
  RayClusterInfo info = RayCluster::describe(Settings{}.resolved_python(), cluster.address());
  EXPECT_EQ(info.gpus, 3);
  EXPECT_EQ(info.nodes_alive, 3);
  EXPECT_TRUE(info.arch.empty());
  EXPECT_NE(info.probe_note.find("no CUDA device"), std::string::npos) << info.probe_note;
  EXPECT_NE(RayCluster::summary(info).find("3 GPU(s) on 3 node(s)"), std::string::npos) << RayCluster::summary(info);

  const auto dir = test::scratch_dir("ray_lane");
  const auto marks = dir / "marks";  // LABEL.NODE_ID, left by each evaluation as it starts
  std::filesystem::create_directories(marks);
  ChildProcessWorkerRunner runner({}, dir / "work");
  runner.set_ray(cluster.address());
  JobQueue::Options q;
  q.gpu_devices = 3;  // one lane per GPU of the cluster
  q.shared_per_device = 1;
  q.results_dir = dir / "jobs";
  JobQueue queue(q);
  std::vector<int> ids;
  for (int i = 0; i < 6; ++i) {
    JobSpec spec;
    spec.key = fmt::format("evaluate:v{}", i);
    spec.title = fmt::format("evaluate v{}", i);
    spec.lane = JobLane::Gpu;
    spec.budget = 300s;
    spec.work = [&runner, i, marks](JobContext& ctx) {
      return runner.run("_where", {{"label", fmt::format("v{}", i)}, {"seconds", 8}, {"mark_dir", marks.string()}},
                        worker_call_for(ctx, fmt::format("evaluating v{}", i)));
    };
    ids.push_back(queue.submit(std::move(spec)));
  }
  // The first three run, one on each node; then a worker node dies under the one it runs.
  auto started = [&] {
    std::vector<std::string> names;
    for (const auto& f : std::filesystem::directory_iterator(marks)) names.push_back(f.path().filename().string());
    return names;
  };
  const auto until = std::chrono::steady_clock::now() + 180s;
  while (started().size() < 3 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(200ms);
  ASSERT_GE(started().size(), 3u);
  const std::string dead = cluster.kill_a_node();
  std::string on_dead;
  for (const auto& name : started())
    if (name.size() > dead.size() && name.substr(name.size() - dead.size()) == dead) on_dead = name.substr(0, name.find('.'));
  ASSERT_FALSE(on_dead.empty()) << "no evaluation was running on the node that was killed";

  std::set<std::string> labels;
  for (int id : ids) {
    auto done = queue.wait(id, 400s);
    ASSERT_TRUE(done);
    ASSERT_EQ(done->state, JobState::Succeeded) << done->title << ": " << done->error;
    EXPECT_NE(done->result["ray"]["node_id"], dead) << done->title << " came from the node that died";
    EXPECT_EQ(done->result["ray"]["address"], cluster.address());
    EXPECT_EQ(done->result["ray"]["gpu_ids"].size(), 1u);
    labels.insert(done->result["label"].get<std::string>());
  }
  EXPECT_EQ(labels.size(), 6u);
  // The results folder holds each evaluation exactly once.
  std::map<std::string, int> stored;
  for (const auto& f : std::filesystem::directory_iterator(dir / "jobs")) {
    std::ifstream in(f.path());
    const auto j = nlohmann::json::parse(in, nullptr, false);
    ASSERT_TRUE(j.is_object()) << f.path();
    const auto& result = j.contains("result") ? j["result"] : j;
    if (result.contains("label")) ++stored[result["label"].get<std::string>()];
  }
  ASSERT_EQ(stored.size(), 6u);
  for (const auto& [label, count] : stored) EXPECT_EQ(count, 1) << label;
  // The one the dead node ran started again elsewhere: two starts, one result.
  int starts = 0;
  for (const auto& name : started()) starts += name.rfind(on_dead + ".", 0) == 0;
  EXPECT_EQ(starts, 2) << on_dead;
}

// `nova optimize --ray` as a user runs it, against a cluster whose GPUs are only Ray's bookkeeping: it
// says what the cluster has, runs intake and the generator here and stores them, and stops before any
// evaluation with the probe's reason (exit 3, as without a GPU), instead of sending work that must fail.
TEST(RayLane, OptimizeOnAClusterWithoutAUsableGpuStoresTheKernelsAndSaysWhy) {
  LocalRayCluster cluster;
  const auto dir = test::scratch_dir("ray_optimize");
  const auto model = test::shared_examples_dir() / "swish_bias_clamp.py";
  ASSERT_TRUE(std::filesystem::exists(model)) << model;
  auto env = ChildProcess::minimal_env();
  env["NOVA_PROJECTS"] = (dir / "projects").string();
  ProcessResult r = ChildProcess::run({test::nova_binary().string(), "optimize", model.string(), "--project",
                                       (dir / "project").string(), "--ray", cluster.address(), "--gpus", "all"},
                                      env, 400s);
  EXPECT_EQ(r.status.code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find(fmt::format("ray: the cluster at {}: 3 GPU(s) on 3 node(s)", cluster.address())),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(fmt::format("no usable GPU on the Ray cluster at {} (no CUDA device", cluster.address())),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("generate: 1 group(s) generated"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("queued on the Ray cluster"), std::string::npos) << "an evaluation was sent: " << r.err;
  // The project holds the graph and the kernel, as `nova status` shows.
  ProcessResult st = ChildProcess::run({test::nova_binary().string(), "status", model.string(), "--project",
                                        (dir / "project").string()},
                                       env, 120s);
  EXPECT_EQ(st.status.code, 0) << st.err;
  EXPECT_NE(st.out.find("not validated yet"), std::string::npos) << st.out;
}

TEST(RayLane, AnUnreachableClusterIsAnErrorNamingTheAddressAtOnce) {
  ChildProcessWorkerRunner runner({}, test::scratch_dir("ray_unreachable"));
  runner.set_ray("127.0.0.1:1");
  const auto started = std::chrono::steady_clock::now();
  try {
    runner.run("_where", {{"label", "v0"}}, WorkerCall{});
    FAIL() << "ran without a cluster";
  } catch (const WorkerRunError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot reach the Ray cluster at 127.0.0.1:1"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 60s);
  EXPECT_THROW(RayCluster::describe(Settings{}.resolved_python(), "127.0.0.1:1"), std::runtime_error);
}

}  // namespace
}  // namespace nova
