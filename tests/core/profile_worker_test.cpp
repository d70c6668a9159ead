// nova_worker.profile on the CPU: it numbers the exported graph's nodes as intake does and brackets
// each with exactly one push and one pop in the generated code, without changing the result; and on
// a machine without a GPU the `profile` command answers over the worker protocol with an error
// that says so.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/env/settings.h"
#include "core/worker/child_process.h"
#include "core/worker/worker_connection.h"
#include "support/test_paths.h"
#include "support/worker_python.h"

namespace nova {
namespace {

using test::has_torch;
using test::worker_env;

constexpr const char* kInstrumentScript = R"(
import json, sys, importlib.util, torch
from nova_worker import profile as P
calls = []
P._push_fn = lambda i: calls.append(["push", i])
P._pop_fn = lambda: calls.append(["pop"])
spec = importlib.util.spec_from_file_location("m", sys.argv[1]); m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
torch.manual_seed(0)
model = m.Model(*m.get_init_inputs()).eval(); inputs = m.get_inputs()
gm, nodes, tensors = P.export_graph(model, inputs)
found = P.instrument(gm, nodes, False)
with torch.no_grad():
    out = gm(*tensors); ref = model(*inputs)
print(json.dumps({"targets": [n["target"] for n in nodes], "ops": [n["op"] for n in nodes],
                  "ids": [n["id"] for n in nodes], "instrumented": found, "calls": calls,
                  "max_diff": float((out - ref).abs().max())}))
)";

TEST(ProfileWorker, NumbersNodesLikeIntakeAndBracketsEachOnce) {
  std::string python = Settings{}.resolved_python();
  if (!has_torch(python)) GTEST_SKIP() << python << " has no torch";
  auto model = test::repo_examples_dir() / "conv2d_min_add_multiply.py";
  auto r = ChildProcess::run({python, "-c", kInstrumentScript, model.string()}, worker_env(),
                             std::chrono::seconds(300));
  ASSERT_EQ(r.status.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out.substr(r.out.rfind('{')));
  EXPECT_EQ(j["targets"], nlohmann::json({"aten.conv2d.default", "aten.clone.default", "aten.min.other",
                                          "aten.add.Tensor", "aten.mul.Tensor"}));
  EXPECT_EQ(j["ops"], nlohmann::json({"conv2d", "clone", "min", "add", "mul"}));
  EXPECT_EQ(j["ids"], nlohmann::json({0, 1, 2, 3, 4}));
  EXPECT_EQ(j["instrumented"], 5);
  nlohmann::json expect = nlohmann::json::array();
  for (int i = 0; i < 5; ++i) {
    expect.push_back({"push", i});
    expect.push_back({"pop"});
  }
  EXPECT_EQ(j["calls"], expect);
  EXPECT_EQ(j["max_diff"].get<double>(), 0.0);
}

TEST(ProfileWorker, TheProfileCommandReportsAMissingGpuOverTheProtocol) {
  std::string python = Settings{}.resolved_python();
  if (!has_torch(python)) GTEST_SKIP() << python << " has no torch";
  auto probe =
      ChildProcess::run({python, "-c", "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)"},
                        worker_env(), std::chrono::seconds(120));
  if (probe.status.code == 0) GTEST_SKIP() << "this machine has a GPU";
  auto env = worker_env();
  env["NOVA_TRACER_LIB"] = "/nonexistent/libnova_tracer.so";
  WorkerConnection worker({python, "-m", "nova_worker", "--once"}, env, "resources/python");
  EXPECT_EQ(worker.await_hello(std::chrono::steady_clock::now() + std::chrono::seconds(120)).mode, "once");
  WorkerRequestOptions options;
  options.timeout = std::chrono::seconds(120);
  nlohmann::json args = {{"model", (test::repo_examples_dir() / "conv2d_min_add_multiply.py").string()}};
  try {
    worker.call("profile", args, options);
    FAIL() << "profiled without a GPU";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.kind(), WorkerError::Kind::Internal);
    EXPECT_NE(std::string(e.what()).find("no CUDA device: profiling needs a GPU"), std::string::npos) << e.what();
  }
  try {
    WorkerConnection again({python, "-m", "nova_worker", "--once"}, env, "resources/python");
    again.await_hello(std::chrono::steady_clock::now() + std::chrono::seconds(120));
    again.call("profile", {{"mode", "sideways"}, {"model", "m.py"}}, options);
    FAIL() << "unknown mode accepted";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.kind(), WorkerError::Kind::BadRequest);
    EXPECT_NE(std::string(e.what()).find("unknown profile mode 'sideways'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nova
