#include "core/graph/model_graph.h"

#include <gtest/gtest.h>

#include "core/graph/lifted_constant.h"
#include "support/graph_fixtures.h"

namespace nova {
namespace {

ModelGraph small_graph() {
  ModelGraph g;
  g.model_path = "m.py";
  g.model_form = "kernelbench";
  g.capture_route = "torch.export";
  g.inputs = {{"x", {2, 3}, {3, 1}, "float32"}};
  g.scalar_inputs = {{{"index", 1}, {"name", "scale"}, {"value", 0.5}}};
  GraphNode mm;
  mm.id = 0;
  mm.target = "aten.linear.default";
  mm.op = "linear";
  mm.op_class = OpClass::Matmul;
  mm.args = {{"input", "x", nullptr}, {"weight", "p_w", nullptr}};
  mm.outputs = {{"linear", {2, 4}, {4, 1}, "float32"}};
  mm.flops = 48;
  GraphNode relu = mm;
  relu.id = 1;
  relu.target = "aten.relu.default";
  relu.op = "relu";
  relu.op_class = OpClass::Elementwise;
  relu.args = {{"self", "linear", nullptr}, {"alpha", "", 1.5}};
  relu.outputs = {{"relu", {2, 4}, {4, 1}, "float32"}};
  g.nodes = {mm, relu};
  g.params = {{"w", "p_w", {"p_w", {4, 3}, {3, 1}, "float32"}, false}};
  FusionGroup grp;
  grp.id = 0;
  grp.kind = "gemm+epilogue";
  grp.anchor = 0;
  grp.nodes = {0, 1};
  grp.inputs = {"x", "p_w"};
  grp.outputs = {"relu"};
  grp.functional_source = "def module_fn(x, p_w): ...";
  g.groups = {grp};
  g.outputs = {relu.outputs[0]};
  return g;
}

TEST(ModelGraph, JsonRoundTripKeepsEverything) {
  ModelGraph g = small_graph();
  nlohmann::json j = g;
  ModelGraph back = nlohmann::json::parse(j.dump()).get<ModelGraph>();
  EXPECT_EQ(back, g);
  back.groups[0].anchor.reset();
  EXPECT_NE(back, g);
}

TEST(ModelGraph, LooksUpProducersAndGroups) {
  ModelGraph g = small_graph();
  ASSERT_NE(g.producer("relu"), nullptr);
  EXPECT_EQ(g.producer("relu")->id, 1);
  EXPECT_EQ(g.producer("x"), nullptr);
  ASSERT_NE(g.group_of(1), nullptr);
  EXPECT_EQ(g.group_of(1)->kind, "gemm+epilogue");
  EXPECT_EQ(g.group_of(7), nullptr);
}

TEST(ModelGraph, RejectsForeignJson) {
  EXPECT_THROW(nlohmann::json({{"nodes", nlohmann::json::array()}}).get<ModelGraph>(), std::runtime_error);
}

}  // namespace

// The recorded intake of conv2d_min_add_multiply: torch.tensor(constant_value) in its forward is
// lifted by torch.export as c_lifted_tensor_0, read like a buffer but not in the model's state_dict.
TEST(ModelGraph, TellsLiftedConstantsFromParametersAndBuffers) {
  ModelGraph graph = test::graph_fixture("conv2d_min_add_multiply");
  std::vector<std::string> constants, state;
  for (const ParamInfo& p : graph.params) (is_lifted_constant(p) ? constants : state).push_back(p.name);
  EXPECT_EQ(constants, std::vector<std::string>{"c_lifted_tensor_0"});
  EXPECT_EQ(state, (std::vector<std::string>{"conv_weight", "conv_bias", "bias"}));
}

}  // namespace nova
