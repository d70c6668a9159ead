// A fusion group of 10,000 elementwise ops in one chain: the pointwise emitter evaluates it on its
// work stack (one native call per op overflowed the stack from about 3,000 ops and took `nova
// generate` and the studio down), the builtin generator writes one kernel for it, and NVRTC compiles
// that kernel for sm_90.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/build/nvrtc_compiler.h"
#include "core/gen/builtin_generator.h"
#include "core/gen/pointwise_emitter.h"
#include "support/test_paths.h"

namespace nova {
namespace {

// x -> add 0.5 -> mul 0.999 -> relu -> add ... (`ops` nodes), one elementwise fusion group; every
// third op also reads the graph input again, so the chain's values are shared, not only passed on.
ModelGraph chain_graph(int ops, const std::vector<std::int64_t>& shape) {
  ModelGraph g;
  g.model_path = "chain.py";
  auto tensor = [&](const std::string& name) { return TensorInfo{name, shape, {}, "float32"}; };
  g.inputs.push_back(tensor("x"));
  FusionGroup group;
  group.kind = "elementwise";
  group.inputs = {"x"};
  std::string previous = "x";
  for (int i = 0; i < ops; ++i) {
    GraphNode n;
    n.id = i;
    const std::string value = fmt::format("v{}", i);
    switch (i % 3) {
      case 0:
        n.target = "aten.add.Tensor", n.op = "add";
        n.args = {{"self", previous, nullptr}, {"other", "", 0.5}};
        break;
      case 1:
        n.target = "aten.mul.Tensor", n.op = "mul";
        n.args = {{"self", previous, nullptr}, {"other", "", 0.999}};
        break;
      default:
        n.target = "aten.maximum.default", n.op = "maximum";
        n.args = {{"self", previous, nullptr}, {"other", "x", nullptr}};
        break;
    }
    n.op_class = OpClass::Elementwise;
    n.outputs = {tensor(value)};
    g.nodes.push_back(n);
    group.nodes.push_back(i);
    previous = value;
  }
  group.outputs = {previous};
  g.outputs = {tensor(previous)};
  g.groups.push_back(group);
  return g;
}

TEST(LongChain, TenThousandElementwiseOpsGenerateOneKernelThatNvrtcCompiles) {
  constexpr int kOps = 10000;
  // A last dimension that is not a multiple of 4: the scalar kernel alone, so NVRTC compiles the
  // chain once rather than once per lane.
  ModelGraph g = chain_graph(kOps, {6, 5});
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  EXPECT_EQ(c.origin.rule, "pointwise");
  ASSERT_EQ(c.plan.steps.size(), 1u);
  // Every op is one statement of the kernel, and the last one is stored.
  EXPECT_NE(c.cuda_source.find(fmt::format("const float v{} = ", kOps)), std::string::npos);
  EXPECT_NE(c.cuda_source.find("nova::maximumf_("), std::string::npos);

  NvrtcCompiler nvrtc(test::scratch_dir("long_chain_nvrtc"));
  NvrtcResult r = nvrtc.compile(c.cuda_source, "chain.cu", "sm_90");
  EXPECT_TRUE(r.ok) << r.log.substr(0, 2000);
}

TEST(LongChain, TheEmitterEvaluatesADeepChainOnItsWorkStackWithValuesShared) {
  // The emitter alone, at several coordinates: each op's value is written once per coordinate set,
  // the shared input is read once, and nothing recurses natively (a native call per op would need
  // far more than the stack holds at 50,000 ops).
  constexpr int kOps = 50000;
  ModelGraph g = chain_graph(kOps, {8});
  PointwiseEmitter e(g, g.groups[0]);
  e.bind_memory("x", "in_x");
  const std::string last = g.groups[0].outputs[0];
  std::string v = e.value(last, {"i"});
  EXPECT_EQ(e.value(last, {"i"}), v);  // memoized
  std::string code = e.take_code(0);
  std::size_t statements = 0, reads = 0;
  for (std::size_t p = code.find("const float"); p != std::string::npos; p = code.find("const float", p + 1))
    ++statements;
  for (std::size_t p = code.find("in_x["); p != std::string::npos; p = code.find("in_x[", p + 1)) ++reads;
  EXPECT_EQ(statements, static_cast<std::size_t>(kOps) + 1);  // every op, and the one load of x
  EXPECT_EQ(reads, 1u);
  EXPECT_EQ(e.visited_nodes().size(), static_cast<std::size_t>(kOps));
}

TEST(LongChain, AnOpNoRuleCoversDeepInTheChainDeclinesWithTheReason) {
  ModelGraph g = chain_graph(5000, {6, 5});
  g.nodes[17].target = "aten.special_bessel_j0.default";
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  ASSERT_TRUE(c.declined.has_value());
  EXPECT_NE(c.declined->find("aten.special_bessel_j0.default"), std::string::npos) << *c.declined;
}

}  // namespace
}  // namespace nova
