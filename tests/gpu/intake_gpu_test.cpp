// `nova intake` and `nova status` as a user runs them on a GPU server, with the server's own Python
// and packages (there, safetensors 0.8 once broke intake for every model): every shared example is
// captured, its example inputs saved, and the graph stored in the project `--project` names, where
// `nova status` reads it back. Skips (with the reason) where no GPU exists.
#include <fstream>

#include <gtest/gtest.h>

#include "core/doctor/doctor_report.h"
#include "core/graph/model_graph.h"
#include "core/worker/child_process.h"
#include "support/test_paths.h"

namespace nova {
namespace {
using namespace std::chrono_literals;

TEST(IntakeGpu, NovaIntakeCapturesEverySharedExampleWithTheServersPython) {
  DoctorReport r;
  probe_cuda_driver(r);
  if (!r.has_gpu()) GTEST_SKIP() << "no CUDA device: " << r.driver_error;
  const auto out = test::scratch_dir("intake_gpu");
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::shared_examples_dir())) {
    if (entry.path().extension() != ".py") continue;
    SCOPED_TRACE(entry.path().filename().string());
    ++models;
    const auto json_out = out / (entry.path().stem().string() + ".graph.json");
    const auto inputs = out / "inputs";
    ProcessResult p = ChildProcess::run({test::nova_binary().string(), "intake", entry.path().string(), "--json",
                                         json_out.string(), "--inputs-dir", inputs.string()},
                                        ChildProcess::minimal_env(), 300s);
    ASSERT_EQ(p.status.code, 0) << p.out << p.err;
    ModelGraph g = nlohmann::json::parse(std::ifstream(json_out)).get<ModelGraph>();
    EXPECT_FALSE(g.nodes.empty());
    EXPECT_FALSE(g.groups.empty());
    EXPECT_TRUE(std::filesystem::exists(inputs / (entry.path().stem().string() + ".inputs.safetensors")));
  }
  EXPECT_GE(models, 9);
}

TEST(IntakeGpu, NovaOptimizeStoresTheGraphWhereNovaStatusFindsIt) {
  DoctorReport r;
  probe_cuda_driver(r);
  if (!r.has_gpu()) GTEST_SKIP() << "no CUDA device: " << r.driver_error;
  const auto project = test::scratch_dir("intake_gpu_project");
  const auto model = test::shared_examples_dir() / "swish_bias_clamp.py";
  ProcessResult run = ChildProcess::run({test::nova_binary().string(), "optimize", model.string(), "--project",
                                         project.string(), "--mode", "cold", "--trials", "2"},
                                        ChildProcess::minimal_env(), 600s);
  ASSERT_EQ(run.status.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("geometric mean vs eager"), std::string::npos) << run.out;
  ProcessResult status = ChildProcess::run(
      {test::nova_binary().string(), "status", model.string(), "--project", project.string(), "--json"},
      ChildProcess::minimal_env(), 60s);
  ASSERT_EQ(status.status.code, 0) << status.err;
  auto j = nlohmann::json::parse(status.out);
  ASSERT_EQ(j["selection"]["groups"].size(), 1u);
  EXPECT_NE(j["selection"]["groups"][0]["outcome"], "unmeasured") << status.out;
}

}  // namespace
}  // namespace nova
