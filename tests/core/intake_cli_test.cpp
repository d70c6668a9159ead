// `nova intake` end to end, through the built binary.
#include <fstream>

#include <gtest/gtest.h>

#include "core/graph/model_graph.h"
#include "core/worker/child_process.h"
#include "support/test_paths.h"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace nova {
namespace {

TEST(IntakeCli, SeedDemoWritesGraphJsonAndSummary) {
  auto dir = test::scratch_dir("intake_cli_seed");
  auto out = dir / "seed.json";
  auto r = ChildProcess::run(
      {test::nova_binary().string(), "intake",
       (test::shared_examples_dir() / "conv2d_min_add_multiply.py").string(), "--json", out.string()},
      ChildProcess::minimal_env(), 180s);
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.out << r.err;
  EXPECT_NE(r.out.find("captured by torch.export"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("conv+epilogue"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("intake took"), std::string::npos) << r.out;
  std::ifstream f(out);
  ModelGraph g = nlohmann::json::parse(f).get<ModelGraph>();
  ASSERT_EQ(g.groups.size(), 1u);
  EXPECT_EQ(g.groups[0].kind, "conv+epilogue");
  EXPECT_TRUE(fs::exists(dir / "conv2d_min_add_multiply.inputs.safetensors"));
}

TEST(IntakeCli, BrokenModelExitsWithCode2AndAPlainMessage) {
  auto r = ChildProcess::run({test::nova_binary().string(), "intake",
                              (test::shared_examples_dir() / "broken" / "get_inputs_raises.py").string()},
                             ChildProcess::minimal_env(), 180s);
  EXPECT_TRUE(r.status.exited);
  EXPECT_EQ(r.status.code, 2) << r.err;
  EXPECT_NE(r.err.find("nova: get_inputs() raised RuntimeError: dataset shard not found"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("raise RuntimeError(\"dataset shard not found\")"), std::string::npos) << r.err;

  auto missing = ChildProcess::run({test::nova_binary().string(), "intake", "/nonexistent/model.py"},
                                   ChildProcess::minimal_env(), 60s);
  EXPECT_EQ(missing.status.code, 2);
  EXPECT_EQ(missing.err, "nova: model file not found: /nonexistent/model.py\n");
}

}  // namespace
}  // namespace nova
