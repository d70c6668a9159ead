// The builtin generator on the graphs intake captured from every example model (recorded in
// tests/fixtures/graphs): every fusion group gets a candidate whose device code NVRTC compiles for
// sm_90, whose plan is consistent with its kernels, and the seed demos' code matches the golden files.
#include "core/gen/builtin_generator.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/build/nvrtc_compiler.h"
#include "core/verify/static_checker.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ModelGraph load(const std::string& name) {
  return nlohmann::json::parse(read(test::fixtures_dir() / "graphs" / (name + ".json"))).get<ModelGraph>();
}

std::vector<std::string> all_graphs() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(test::fixtures_dir() / "graphs"))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Parameters of an extern "C" kernel in the source, counted by commas at depth 0.
int kernel_param_count(const std::string& source, const std::string& kernel) {
  auto pos = source.find(kernel + "(");
  if (pos == std::string::npos) return -1;
  int depth = 0, count = 1;
  for (auto i = pos + kernel.size() + 1; i < source.size(); ++i) {
    char c = source[i];
    if (c == '(') ++depth;
    if (c == ')') {
      if (depth == 0) return count;
      --depth;
    }
    if (c == ',' && depth == 0) ++count;
  }
  return -1;
}

TEST(BuiltinGenerator, EveryGroupOfEveryExampleGeneratesAndCompilesWithNvrtc) {
  NvrtcCompiler nvrtc(test::scratch_dir("generator_nvrtc"));
  BuiltinGenerator gen;
  auto names = all_graphs();
  ASSERT_GE(names.size(), 14u);
  int groups = 0;
  for (const auto& name : names) {
    ModelGraph g = load(name);
    for (const auto& group : g.groups) {
      ++groups;
      SCOPED_TRACE(name + " group " + std::to_string(group.id));
      Candidate c = gen.generate(g, group);
      ASSERT_FALSE(c.declined.has_value()) << *c.declined;
      EXPECT_EQ(c.origin.kind, "builtin");
      EXPECT_EQ(c.plan.inputs.size(), group.inputs.size());
      EXPECT_EQ(c.plan.outputs.size(), group.outputs.size());
      ASSERT_FALSE(c.plan.steps.empty());
      for (const auto& s : c.plan.steps) {
        if (s.type != "kernel") continue;
        EXPECT_EQ(kernel_param_count(c.cuda_source, s.kernel), static_cast<int>(s.args.size())) << s.kernel;
        EXPECT_GE(s.grid[0], 1);
        EXPECT_LE(s.block[0] * s.block[1] * s.block[2], 1024);
      }
      // Every reference points at something the plan allocates or receives.
      for (const auto& s : c.plan.steps)
        for (const auto& a : s.args) {
          if (a.ref.empty()) continue;
          auto colon = a.ref.find(':');
          std::string kind = a.ref.substr(0, colon);
          std::size_t i = std::stoul(a.ref.substr(colon + 1));
          std::size_t n = kind == "input"    ? c.plan.inputs.size()
                          : kind == "output" ? c.plan.outputs.size()
                                             : c.plan.temps.size();
          EXPECT_LT(i, n) << a.ref;
        }
      // Validation's static checks see the same kernels the plan launches, and nothing to refuse.
      StaticReport report = StaticChecker().check_candidate(c);
      EXPECT_FALSE(report.refused()) << (report.refusals.empty() ? "" : report.refusals[0]);
      for (const auto& s : c.plan.steps)
        if (s.type == "kernel")
          EXPECT_NE(std::find(report.kernels.begin(), report.kernels.end(), s.kernel), report.kernels.end())
              << s.kernel;
      NvrtcResult r = nvrtc.compile(c.cuda_source, name + ".cu", "sm_90");
      EXPECT_TRUE(r.ok) << r.log;
      EXPECT_NE(c.extension_source.find("PYBIND11_MODULE"), std::string::npos);
    }
  }
  EXPECT_GE(groups, 25);
}

TEST(BuiltinGenerator, SeedDemosPickTheFusedRulesAndMatchTheGoldenCode) {
  BuiltinGenerator gen;
  for (const auto& [name, rule] : std::vector<std::pair<std::string, std::string>>{
           {"conv2d_min_add_multiply", "conv2d_direct"}, {"matmul_scaling_residual_add", "gemm_tiled"}}) {
    ModelGraph g = load(name);
    ASSERT_EQ(g.groups.size(), 1u);
    Candidate c = gen.generate(g, g.groups[0]);
    EXPECT_EQ(c.origin.rule, rule);
    ASSERT_EQ(c.plan.steps.size(), 1u) << "one launch for the whole group";
    EXPECT_TRUE(c.library_ops.empty());
    fs::path golden = test::fixtures_dir() / "golden" / (name + ".group0.cu");
    if (std::getenv("NOVA_UPDATE_GOLDEN")) {
      std::ofstream(golden) << c.cuda_source;
    }
    EXPECT_EQ(c.cuda_source, read(golden))
        << "regenerate with NOVA_UPDATE_GOLDEN=1 after a deliberate change";
  }
}

TEST(BuiltinGenerator, FusesTheWholeSeedEpilogueIntoTheConvolution) {
  ModelGraph g = load("conv2d_min_add_multiply");
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  // min with the lifted constant, the bias add and the scale all happen before the single store.
  EXPECT_NE(c.cuda_source.find("nova::minimumf_(conv, "), std::string::npos);
  EXPECT_NE(c.cuda_source.find("* 2.0f"), std::string::npos);
  std::regex store(R"(out_mul\[[^\]]+\] =)");
  EXPECT_EQ(std::distance(std::sregex_iterator(c.cuda_source.begin(), c.cuda_source.end(), store),
                          std::sregex_iterator()),
            1);
}

TEST(BuiltinGenerator, MemoryBoundChainsUseSixteenByteAccesses) {
  for (const char* name : {"swish_bias_clamp", "softmax_rows", "layernorm_gelu"}) {
    ModelGraph g = load(name);
    Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
    EXPECT_NE(c.cuda_source.find("float4"), std::string::npos) << name;
  }
}

TEST(BuiltinGenerator, LargeProblemsRunTheModelsOwnLibraryCallThenOneFusedEpiloguePass) {
  ModelGraph g = load("linear_relu_bias");
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  EXPECT_EQ(c.origin.rule, "gemm_library+epilogue");
  ASSERT_EQ(c.plan.steps.size(), 2u);
  EXPECT_EQ(c.plan.steps[0].op, "aten.linear.default");
  EXPECT_EQ(c.plan.steps[1].type, "kernel");

  // KernelBench's compute-bound sizes of the seed problems (graphs recorded by `nova intake`): the
  // library call is eager's own (same op, same operands, no alpha/beta folding), then exactly one
  // kernel that reads its result and writes the group's output.
  for (const auto& [name, rule, op] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"matmul_scaling_residual_add_large.graph", "gemm_library+epilogue", "aten.linear.default"},
           {"conv2d_min_add_multiply_large.graph", "conv2d_library+epilogue", "aten.conv2d.default"}}) {
    SCOPED_TRACE(name);
    ModelGraph big = load(name);
    ASSERT_EQ(big.groups.size(), 1u);
    const GraphNode* anchor = big.node(*big.groups[0].anchor);
    ASSERT_NE(anchor, nullptr);
    Candidate lib = BuiltinGenerator().generate(big, big.groups[0]);
    ASSERT_FALSE(lib.declined.has_value()) << *lib.declined;
    EXPECT_EQ(lib.origin.rule, rule);
    ASSERT_EQ(lib.plan.steps.size(), 2u);
    const PlanStep& call = lib.plan.steps[0];
    EXPECT_EQ(call.type, "library");
    EXPECT_EQ(call.op, op);
    EXPECT_EQ(call.op, anchor->target);
    EXPECT_TRUE(call.kwargs.is_null() || call.kwargs.empty()) << call.kwargs.dump();
    ASSERT_EQ(call.args.size(), anchor->args.size());
    for (std::size_t i = 0; i < call.args.size(); ++i) {
      EXPECT_EQ(call.args[i].ref, fmt::format("input:{}", i)) << "operand " << i;
      EXPECT_TRUE(call.args[i].view.empty()) << "operand " << i;
    }
    EXPECT_EQ(call.out, "temp:0");
    const PlanStep& epilogue = lib.plan.steps[1];
    EXPECT_EQ(epilogue.type, "kernel");
    EXPECT_EQ(epilogue.args.back().ref, "temp:0");
    EXPECT_EQ(lib.library_ops, std::vector<std::string>{op});
  }
}

TEST(BuiltinGenerator, CandidateJsonRoundTrips) {
  ModelGraph g = load("tiny_transformer_block");
  for (const auto& group : g.groups) {
    Candidate c = BuiltinGenerator().generate(g, group);
    EXPECT_EQ(nlohmann::json(c).get<Candidate>(), c);
  }
}

TEST(BuiltinGenerator, DeclinesWhatNoRuleCoversWithTheReason) {
  ModelGraph g = load("swish_bias_clamp");
  g.nodes[0].target = "aten.special_bessel_j0.default";
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  ASSERT_TRUE(c.declined.has_value());
  EXPECT_NE(c.declined->find("aten.special_bessel_j0.default"), std::string::npos);
  EXPECT_TRUE(c.cuda_source.empty());
}

}  // namespace
}  // namespace nova
