// `nova profile` as a user runs it: on a machine without a GPU it says so plainly and exits 3; from
// a recorded trace it prints the hot-op table (rates from intake's graph, a dash explained) and
// writes the Chrome trace; a trace of another model's graph is refused naming both.
#include <fstream>

#include <gtest/gtest.h>

#include "core/trace/profile_runner.h"
#include "core/worker/child_process.h"
#include "support/synthetic_trace.h"
#include "support/test_paths.h"

namespace nova {
namespace {

TEST(ProfileCommand, WithoutAGpuSaysSoAndExits3) {
  std::string why;
  if (ProfileRunner::gpu_available(&why)) GTEST_SKIP() << "this machine has a GPU (covered by the GPU tests)";
  auto model = test::repo_examples_dir() / "conv2d_min_add_multiply.py";
  auto r = ChildProcess::run({test::nova_binary().string(), "profile", model.string(), "--iters", "5"},
                             ChildProcess::minimal_env(), std::chrono::seconds(60));
  EXPECT_EQ(r.status.code, 3) << r.out << r.err;
  EXPECT_NE(
      r.err.find("no CUDA device: profiling needs a GPU (intake, generation and export work without one)"),
      std::string::npos)
      << r.err;
  auto overhead = ChildProcess::run({test::nova_binary().string(), "profile", "--overhead", model.string()},
                                    ChildProcess::minimal_env(), std::chrono::seconds(60));
  EXPECT_EQ(overhead.status.code, 3) << overhead.out << overhead.err;
  EXPECT_NE(overhead.err.find("no CUDA device"), std::string::npos) << overhead.err;
}

TEST(ProfileCommand, PrintsTheHotOpTableFromARecordedTrace) {
  auto dir = test::scratch_dir("profile_command");
  test::write_seed_trace(dir / "seed.novatrace", 5);
  {
    std::ofstream g(dir / "seed.graph.json");
    g << nlohmann::json(test::seed_graph()).dump();
  }
  auto r = ChildProcess::run(
      {test::nova_binary().string(), "profile", "--from-trace", (dir / "seed.novatrace").string(), "--graph",
       (dir / "seed.graph.json").string(), "--out", (dir / "seed.json").string()},
      ChildProcess::minimal_env(), std::chrono::seconds(60));
  ASSERT_EQ(r.status.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("NVIDIA H200: 20 kernels"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("over 5 iterations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[0] convolution"), std::string::npos) << r.out;
  // Ranked: convolution, add, minimum, mul.
  EXPECT_LT(r.out.find("[0] convolution"), r.out.find("[3] add"));
  EXPECT_LT(r.out.find("[3] add"), r.out.find("[2] minimum"));
  EXPECT_LT(r.out.find("[2] minimum"), r.out.find("[4] mul"));
  EXPECT_TRUE(std::filesystem::exists(dir / "seed.json"));

  auto bad =
      ChildProcess::run({test::nova_binary().string(), "profile", "--from-trace", "/nonexistent.novatrace"},
                        ChildProcess::minimal_env(), std::chrono::seconds(60));
  EXPECT_EQ(bad.status.code, 2) << bad.err;
}

TEST(ProfileCommand, RefusesATraceOfAnotherGraphAndFillsTheRatesFromIntakesGraph) {
  auto run = [](const std::string& trace, const std::vector<std::string>& more) {
    std::vector<std::string> argv = {test::nova_binary().string(), "profile", "--from-trace",
                                     (test::fixtures_dir() / "traces" / trace).string()};
    argv.insert(argv.end(), more.begin(), more.end());
    return ChildProcess::run(argv, ChildProcess::minimal_env(), std::chrono::seconds(60));
  };
  const std::string mlp_graph = (test::fixtures_dir() / "graphs" / "mlp_block.json").string();
  auto refused = run("tiny_transformer_block.novatrace", {"--graph", mlp_graph});
  EXPECT_EQ(refused.status.code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("tiny_transformer_block.novatrace"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("mlp_block.py"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out.find("attributed"), std::string::npos) << refused.out;

  auto own = run("mlp_block.novatrace", {"--graph", mlp_graph});
  ASSERT_EQ(own.status.code, 0) << own.out << own.err;
  EXPECT_NE(own.out.find("note: mlp_block.novatrace does not say which model"), std::string::npos) << own.out;
  EXPECT_NE(own.out.find("B/s "), std::string::npos) << own.out;  // bandwidth filled from the costs
  EXPECT_NE(own.out.find("headroom: GPU time per call over the roofline floor"), std::string::npos) << own.out;

  auto bare = run("mlp_block.novatrace", {});
  ASSERT_EQ(bare.status.code, 0) << bare.out << bare.err;
  EXPECT_NE(bare.out.find("-: no model graph"), std::string::npos) << bare.out;
  EXPECT_NE(bare.out.find("give --graph GRAPH.json"), std::string::npos) << bare.out;
}

// A trace recorded by `nova profile` on an H100 (session 18, tests/fixtures/traces/h100_session18), read
// with the model file beside it: intake runs here (CPU, meta device) and fills every row's bandwidth,
// FLOP rate and headroom; the same trace against another model file is refused by its identity.
TEST(ProfileCommand, ARecordedGpuTraceWithItsModelFileGetsTheCostsFromIntake) {
  const auto trace = (test::fixtures_dir() / "traces" / "h100_session18" / "tiny_transformer_block.novatrace").string();
  auto run = [&](const std::string& model) {
    return ChildProcess::run({test::nova_binary().string(), "profile", model, "--from-trace", trace, "--no-project"},
                             ChildProcess::minimal_env(), std::chrono::seconds(240));
  };
  auto own = run((test::shared_examples_dir() / "tiny_transformer_block.py").string());
  ASSERT_EQ(own.status.code, 0) << own.out << own.err;
  EXPECT_NE(own.out.find("NVIDIA H100 80GB HBM3: 400 kernels"), std::string::npos) << own.out;
  EXPECT_NE(own.out.find("100.0% attributed"), std::string::npos) << own.out;
  // The hottest row, a linear layer, with its costs; no row of a named op left without them.
  EXPECT_NE(own.out.find("TFLOP/s"), std::string::npos) << own.out;
  EXPECT_NE(own.out.find("[24] linear"), std::string::npos) << own.out;
  EXPECT_EQ(own.out.find("give --graph GRAPH.json"), std::string::npos) << own.out;

  auto other = run((test::shared_examples_dir() / "mlp_block.py").string());
  EXPECT_EQ(other.status.code, 2) << other.out << other.err;
  EXPECT_NE(other.err.find("tiny_transformer_block"), std::string::npos) << other.err;
  EXPECT_EQ(other.out.find("attributed"), std::string::npos) << other.out;
}

}  // namespace
}  // namespace nova
