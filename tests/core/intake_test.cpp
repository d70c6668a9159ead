#include "core/graph/intake_runner.h"

#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "core/env/resource_paths.h"
#include "core/worker/child_process.h"
#include "support/test_paths.h"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace nova {
namespace {

// One worker for the whole suite: importing torch costs seconds per start.
class Intake : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { worker_ = new WorkerClient(); }
  static void TearDownTestSuite() {
    delete worker_;
    worker_ = nullptr;
  }
  static WorkerClient* worker_;
};
WorkerClient* Intake::worker_ = nullptr;

int count_lines(const fs::path& p) {
  std::ifstream f(p);
  return static_cast<int>(std::count(std::istreambuf_iterator<char>(f), {}, '\n'));
}

std::vector<std::string> compute_ops(const ModelGraph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.nodes)
    if (n.op_class != OpClass::DataMovement) ops.push_back(n.op);
  return ops;
}

std::vector<std::string> group_kinds(const ModelGraph& g) {
  std::vector<std::string> kinds;
  for (const auto& grp : g.groups) kinds.push_back(grp.kind);
  return kinds;
}

void expect_group_checks_pass(const nlohmann::json& raw) {
  ASSERT_TRUE(raw.contains("group_checks"));
  for (const auto& c : raw["group_checks"])
    EXPECT_TRUE(c.value("ok", false)) << "group " << c.value("group", -1) << ": " << c.value("error", "");
}

TEST_F(Intake, SeedDemoIsOneConvEpilogueGroup) {
  IntakeRunner runner(*worker_);
  auto model = test::shared_examples_dir() / "conv2d_min_add_multiply.py";
  auto dir = test::scratch_dir("intake_seed");
  IntakeOptions opts;
  opts.inputs_dir = dir;
  ModelGraph g = runner.run(model, opts);

  EXPECT_EQ(g.model_form, "functional");
  EXPECT_EQ(g.capture_route, "torch.export");
  EXPECT_TRUE(g.warnings.empty());
  EXPECT_EQ(compute_ops(g), (std::vector<std::string>{"convolution", "minimum", "add", "mul"}));
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.inputs[0].shape, (std::vector<std::int64_t>{128, 3, 32, 32}));
  ASSERT_EQ(g.scalar_inputs.size(), 2u);
  EXPECT_EQ(g.scalar_inputs[0].value("index", -1), 1);
  EXPECT_DOUBLE_EQ(g.scalar_inputs[1].value("value", 0.0), 2.0);
  std::vector<std::string> params;
  for (const auto& p : g.params) params.push_back(p.name);
  EXPECT_EQ(params, (std::vector<std::string>{"conv_weight", "conv_bias", "bias", "c_lifted_tensor_0"}));

  const GraphNode& conv = g.nodes.front();
  EXPECT_EQ(conv.op_class, OpClass::Convolution);
  // 2 * out elements (128*16*30*30) * (3*3*3) multiply-adds, plus the bias.
  EXPECT_DOUBLE_EQ(conv.flops, 2.0 * 128 * 16 * 30 * 30 * 27 + 128 * 16 * 30 * 30);
  EXPECT_EQ(conv.outputs.at(0).shape, (std::vector<std::int64_t>{128, 16, 30, 30}));
  EXPECT_EQ(fs::path(conv.file), fs::absolute(model));
  EXPECT_EQ(conv.line, 28);  // inside module_fn, not the fn( call in forward
  EXPECT_NE(conv.source_text.find("F.conv2d"), std::string::npos);
  EXPECT_EQ(g.nodes.back().line, 31);

  ASSERT_EQ(g.groups.size(), 1u);
  const FusionGroup& grp = g.groups[0];
  EXPECT_EQ(grp.kind, "conv+epilogue");
  EXPECT_EQ(grp.anchor, conv.id);
  EXPECT_EQ(grp.nodes.size(), g.nodes.size());
  EXPECT_EQ(grp.outputs, std::vector<std::string>{g.outputs.at(0).name});
  EXPECT_NE(grp.functional_source.find("def module_fn("), std::string::npos);
  expect_group_checks_pass(runner.last_result());

  EXPECT_TRUE(fs::exists(g.saved_inputs));
  EXPECT_GT(fs::file_size(g.saved_inputs), 128u * 3 * 32 * 32 * 4);
  {
    // A safetensors file: an 8-byte little-endian header size, then the JSON header.
    std::ifstream in(g.saved_inputs, std::ios::binary);
    unsigned char size_bytes[8] = {};
    in.read(reinterpret_cast<char*>(size_bytes), 8);
    std::uint64_t header_size = 0;
    for (int i = 7; i >= 0; --i) header_size = header_size << 8 | size_bytes[i];
    ASSERT_LT(header_size, 1u << 20);
    std::string header(header_size, '\0');
    in.read(header.data(), static_cast<std::streamsize>(header_size));
    auto h = nlohmann::json::parse(header);
    const auto& x = h.at("input." + g.inputs[0].name);
    EXPECT_EQ(x.at("dtype"), "F32");
    EXPECT_EQ(x.at("shape"), nlohmann::json({128, 3, 32, 32}));
    EXPECT_TRUE(h.contains("param.conv_weight")) << header;
    EXPECT_EQ(h.at("__metadata__").value("format", ""), "nova.example_inputs");
  }

  // The group's functional source runs on its own in a plain interpreter.
  auto script = dir / "group0.py";
  std::ofstream(script) << grp.functional_source
                        << "\nif __name__ == '__main__':\n    out = module_fn(*get_inputs())\n"
                           "    print(list(out.shape), out.dtype)\n";
  auto r = ChildProcess::run({default_python(), script.string()}, ChildProcess::minimal_env(), 120s);
  EXPECT_TRUE(r.status.exited && r.status.code == 0) << r.err;
  EXPECT_EQ(r.out, "[128, 16, 30, 30] torch.float32\n");

  nlohmann::json j = g;
  EXPECT_EQ(nlohmann::json::parse(j.dump()).get<ModelGraph>(), g);
}

TEST_F(Intake, EveryExampleModel) {
  // Expected fusion group kinds, in order: the partition each model should get.
  const std::map<std::string, std::vector<std::string>> expected = {
      {"conv2d_min_add_multiply.py", {"conv+epilogue"}},
      {"conv2d_min_add_multiply_large.py", {"conv+epilogue"}},
      {"matmul_scaling_residual_add_large.py", {"gemm+epilogue"}},
      {"conv2d_relu_hardswish.py", {"conv+epilogue"}},
      {"layernorm_gelu.py", {"norm"}},
      {"linear_relu_bias.py", {"gemm+epilogue"}},
      {"matmul_scaling_residual_add.py", {"gemm+epilogue"}},
      {"mlp_block.py", {"norm", "gemm+epilogue", "gemm+epilogue", "gemm+epilogue"}},
      {"softmax_rows.py", {"reduction"}},
      {"swish_bias_clamp.py", {"elementwise"}},
      {"tiny_transformer_block.py",
       {"norm", "gemm+epilogue", "gemm+epilogue", "reduction", "gemm+epilogue", "gemm+epilogue", "norm",
        "gemm+epilogue", "gemm+epilogue"}},
      {"gelu_tanh_chain.py", {"elementwise"}},
      {"rmsnorm_silu.py", {"norm"}},
      {"bmm_softmax.py", {"gemm+epilogue", "reduction"}},
      {"groupnorm_mish.py", {"norm"}},
      {"logsumexp_rows.py", {"reduction"}},
      // The coverage models (issue #24; their graphs in tests/fixtures/graphs/coverage).
      {"activation_chain.py", {"elementwise", "other", "elementwise", "elementwise", "elementwise", "elementwise"}},
      {"adaptive_global_pool.py", {"conv+epilogue", "other", "other", "gemm+epilogue", "other"}},
      {"bmm_transposed_tril_logsumexp.py", {"gemm+epilogue", "gemm+epilogue"}},  // logsumexp with its product
      {"conv3d_batchnorm_mish.py", {"conv+epilogue", "elementwise", "norm"}},
      {"conv_transpose2d_maxpool_hardtanh.py", {"conv+epilogue", "other"}},
      {"conv_transpose3d_avgpool_gelu.py", {"conv+epilogue", "other", "reduction"}},
      {"depthwise_grouped_conv_relu.py", {"conv+epilogue", "conv+epilogue", "conv+epilogue"}},
      {"linear_softmax_sum.py", {"gemm+epilogue", "reduction", "reduction", "gemm+epilogue", "gemm+epilogue"}},
      {"norms_instance_group_layer.py", {"norm", "norm", "norm", "norm"}},
      {"reductions_any_dim.py", {"reduction", "reduction", "reduction", "reduction", "reduction"}},
  };
  // The *_large.py examples (KernelBench's compute-bound sizes of the seed problems) too: intake
  // captures on the meta device, so their size costs no arithmetic (docs/perf-notes.md).
  std::vector<fs::path> models;
  for (const auto& dir : {test::shared_examples_dir(), test::repo_examples_dir()})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".py") models.push_back(e.path());
  std::sort(models.begin(), models.end());
  ASSERT_GE(models.size(), 28u);  // 9 shared + 19 in the repo (two of them the seed copies)

  IntakeRunner runner(*worker_);
  IntakeOptions opts;
  opts.check_groups = true;
  for (const auto& model : models) {
    SCOPED_TRACE(model.string());
    ModelGraph g = runner.run(model, opts);
    ASSERT_FALSE(g.nodes.empty());
    EXPECT_EQ(g.capture_route, "torch.export");
    EXPECT_TRUE(g.warnings.empty()) << g.warnings.front();
    auto it = expected.find(model.filename().string());
    ASSERT_NE(it, expected.end()) << "no expectation for this example";
    EXPECT_EQ(group_kinds(g), it->second);

    const int lines = count_lines(model);
    std::map<int, int> membership;
    for (const auto& n : g.nodes) {
      SCOPED_TRACE(n.target);
      EXPECT_EQ(fs::path(n.file), fs::absolute(model));
      EXPECT_GT(n.line, 0);
      EXPECT_LE(n.line, lines);
      EXPECT_FALSE(n.source_text.empty());
      EXPECT_FALSE(n.outputs.empty());
      if (n.op_class == OpClass::Convolution || n.op_class == OpClass::Matmul) EXPECT_GT(n.flops, 0);
      if (n.op_class == OpClass::DataMovement) EXPECT_EQ(n.flops, 0);
      membership[n.id] = 0;
    }
    for (const auto& grp : g.groups) {
      EXPECT_FALSE(grp.outputs.empty());
      EXPECT_FALSE(grp.functional_source.empty());
      for (int id : grp.nodes) ++membership[id];
    }
    for (const auto& [id, count] : membership) EXPECT_EQ(count, 1) << "node " << id;
    expect_group_checks_pass(runner.last_result());
    nlohmann::json j = g;
    EXPECT_EQ(nlohmann::json::parse(j.dump()).get<ModelGraph>(), g);
  }
  // Module scopes come from nn_module_stack.
  ModelGraph t = runner.run(test::shared_examples_dir() / "tiny_transformer_block.py", opts);
  auto qkv =
      std::find_if(t.nodes.begin(), t.nodes.end(), [](const GraphNode& n) { return n.scope == "attn.qkv"; });
  ASSERT_NE(qkv, t.nodes.end());
  EXPECT_EQ(qkv->scope_type, "torch.nn.modules.linear.Linear");
  EXPECT_EQ(qkv->line, 17);
  EXPECT_EQ(t.params.size(), 12u);
  EXPECT_GT(runner.last_seconds(), 0);
}

TEST_F(Intake, BrokenModelsFailWithPreciseMessages) {
  IntakeRunner runner(*worker_);
  const fs::path broken = test::shared_examples_dir() / "broken";
  auto user_error = [&](const std::string& file) -> WorkerError {
    try {
      runner.run(broken / file);
    } catch (const WorkerError& e) {
      EXPECT_EQ(e.kind(), WorkerError::Kind::UserError) << e.what();
      return e;
    }
    ADD_FAILURE() << file << " was accepted";
    return WorkerError(WorkerError::Kind::Internal, "");
  };

  WorkerError syntax = user_error("syntax_error.py");
  EXPECT_NE(std::string(syntax.what()).find("syntax error in syntax_error.py line 6"), std::string::npos)
      << syntax.what();
  EXPECT_EQ(fs::path(syntax.file()).filename(), "syntax_error.py");
  EXPECT_EQ(syntax.line(), 6);

  WorkerError missing = user_error("missing_get_inputs.py");
  EXPECT_NE(std::string(missing.what()).find("does not define get_inputs"), std::string::npos)
      << missing.what();

  WorkerError raises = user_error("get_inputs_raises.py");
  EXPECT_NE(std::string(raises.what()).find("get_inputs() raised RuntimeError"), std::string::npos);
  EXPECT_NE(raises.traceback().find("dataset shard not found"), std::string::npos);
  EXPECT_NE(raises.traceback().find("get_inputs_raises.py\", line 11"), std::string::npos)
      << raises.traceback();
  EXPECT_EQ(raises.traceback().find("nova_worker"), std::string::npos) << "worker frames not trimmed";

  WorkerError too_large = user_error("too_large.py");
  EXPECT_NE(std::string(too_large.what()).find("get_inputs() could not allocate 4.0 TiB"), std::string::npos)
      << too_large.what();

  ModelGraph branch = runner.run(broken / "data_dependent_branch.py");
  EXPECT_EQ(branch.capture_route, "dispatch_trace");
  ASSERT_FALSE(branch.warnings.empty());
  EXPECT_NE(branch.warnings[0].find("data_dependent_branch.py:9"), std::string::npos) << branch.warnings[0];
  ASSERT_FALSE(branch.nodes.empty());
  for (const auto& n : branch.nodes) {
    EXPECT_NE(n.op, "sum") << "the branch condition leaked into the graph";
    EXPECT_TRUE(n.line == 10 || n.line == 11) << n.line;
  }
  expect_group_checks_pass(runner.last_result());

  // After all that, the same worker (or a fresh one) still takes a good model.
  ModelGraph good = runner.run(test::shared_examples_dir() / "linear_relu_bias.py");
  EXPECT_EQ(group_kinds(good), std::vector<std::string>{"gemm+epilogue"});

  EXPECT_THROW(runner.run(broken / "no_such_model.py"), std::invalid_argument);
}

}  // namespace
}  // namespace nova
