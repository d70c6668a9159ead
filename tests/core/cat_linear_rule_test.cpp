// CatLinearRule on the recorded graph of adaptive_global_pool (a linear head over the concatenation of
// two pooled maps, read as they are, and a global average pool): the concatenation is never written, K
// is split along the pieces, the global pool is reduced on the fly, and heads the rule does not hold
// are declined with their reason.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/gen/builtin_generator.h"
#include "core/verify/static_checker.h"
#include "support/graph_fixtures.h"

namespace nova {
namespace {

constexpr int kHead = 3;  // pool -> flatten -> cat -> linear

// The graph with the head widened to `outputs` classes (its weight, bias and result).
ModelGraph with_head_outputs(std::int64_t outputs) {
  ModelGraph g = test::graph_fixture("coverage/adaptive_global_pool");
  for (auto& n : g.nodes)
    for (auto& o : n.outputs)
      if (o.name == "linear") o.shape = {32, outputs};
  for (auto& p : g.params) {
    if (p.graph_input == "p_head_weight") p.tensor.shape = {outputs, 8448};
    if (p.graph_input == "p_head_bias") p.tensor.shape = {outputs};
  }
  for (auto& o : g.outputs)
    if (o.name == "linear") o.shape = {32, outputs};
  return g;
}

TEST(CatLinearRule, AHeadOverAConcatenationSplitsKAlongThePiecesAndNeverWritesTheConcatenation) {
  ModelGraph g = test::graph_fixture("coverage/adaptive_global_pool");
  const Candidate c = BuiltinGenerator().generate(g, g.groups.at(kHead));
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  EXPECT_EQ(c.origin.rule, "cat_linear");
  EXPECT_TRUE(c.library_ops.empty());
  // The pieces' slices: 6272 columns in 7 blocks of 1024, 2048 in 2, 128 pooled channels in 16 of 8; a
  // block per slice and row (32 rows), then one sum kernel over the 32 x 10 outputs.
  ASSERT_EQ(c.plan.steps.size(), 2u);
  EXPECT_EQ(c.plan.steps[0].kernel, "nova_g3_cat_linear");
  EXPECT_EQ(c.plan.steps[0].grid, (std::array<std::int64_t, 3>{7 + 2 + 16, 32, 1}));
  EXPECT_EQ(c.plan.steps[1].kernel, "nova_g3_cat_linear_sum");
  ASSERT_EQ(c.plan.temps.size(), 1u);  // the partials, not the concatenation
  EXPECT_EQ(c.plan.temps[0].shape, (std::vector<std::int64_t>{25, 32, 10}));
  const std::string& src = c.cuda_source;
  // Each piece meets its own columns of the weight.
  EXPECT_NE(src.find("in_flatten[r * 6272LL + nova_j]"), std::string::npos) << src;
  EXPECT_NE(src.find("in_p_head_weight[nova_n * 8448LL + 0LL + nova_j]"), std::string::npos) << src;
  EXPECT_NE(src.find("in_flatten_1[r * 2048LL + nova_j]"), std::string::npos) << src;
  EXPECT_NE(src.find("in_p_head_weight[nova_n * 8448LL + 6272LL + nova_j]"), std::string::npos) << src;
  // The global average pool: the mean of each channel's 32 x 32 window of relu, a warp per channel.
  EXPECT_NE(src.find("const long long nova_flat = (r * 128LL + nova_c) * 1024LL + nova_s;"), std::string::npos) << src;
  EXPECT_NE(src.find("in_relu[nova_flat]"), std::string::npos) << src;
  EXPECT_NE(src.find("nova_red / 1024.0f"), std::string::npos) << src;
  EXPECT_NE(src.find("in_p_head_weight[nova_n * 8448LL + 8320LL + nova_c]"), std::string::npos) << src;
  // The slices added in a fixed order, then the bias.
  EXPECT_NE(src.find("for (int u = 0; u < 25; ++u) acc += nova_partials[u * 320LL + i];"), std::string::npos) << src;
  EXPECT_NE(src.find("const float gemm = acc + nova::to_f(in_p_head_bias[col]);"), std::string::npos) << src;
  EXPECT_FALSE(StaticChecker().check_candidate(c).refused());
  // No alternative form: the tensor-core GEMM has nothing to add to a head of 10 outputs.
  EXPECT_TRUE(BuiltinGenerator().alternatives(g, g.groups.at(kHead)).empty());
}

TEST(CatLinearRule, AHeadWiderThanTheRuleHoldsIsDeclinedWithItsWidth) {
  ModelGraph g = with_head_outputs(64);
  const Candidate c = BuiltinGenerator().generate(g, g.groups.at(kHead));
  ASSERT_TRUE(c.declined.has_value()) << c.cuda_source;
  EXPECT_NE(c.declined->find("a GEMM of 64 outputs"), std::string::npos) << *c.declined;
  EXPECT_NE(c.declined->find("at most 32"), std::string::npos) << *c.declined;
  // At the limit it still generates, with 32 accumulators a thread.
  ModelGraph at_limit = with_head_outputs(32);
  const Candidate ok = BuiltinGenerator().generate(at_limit, at_limit.groups.at(kHead));
  ASSERT_FALSE(ok.declined.has_value()) << *ok.declined;
  EXPECT_NE(ok.cuda_source.find("float acc[32];"), std::string::npos);
}

TEST(CatLinearRule, AConcatenationAlongTheRowsIsDeclined) {
  ModelGraph g = test::graph_fixture("coverage/adaptive_global_pool");
  for (auto& n : g.nodes)
    if (n.target == "aten.cat.default")
      for (auto& a : n.args)
        if (a.name == "dim") a.constant = 0;
  const Candidate c = BuiltinGenerator().generate(g, g.groups.at(kHead));
  ASSERT_TRUE(c.declined.has_value());
  EXPECT_NE(c.declined->find("along the rows"), std::string::npos) << *c.declined;
}

// The global pool written as a reduction over the trailing dimensions (negative dims, keepdim): amax is
// walked with the NaN-propagating max and no divisor; a mean over only the last dimension is not one value
// per channel, so that piece is read as it is (the emitter then has no rule for it: declined with the reason).
TEST(CatLinearRule, AMaxOverTheTrailingDimensionsIsPooledWithTheMaxAndAPartialReductionIsNot) {
  const auto with_pool = [](const char* target, nlohmann::json dims) {
    ModelGraph g = test::graph_fixture("coverage/adaptive_global_pool");
    for (auto& n : g.nodes)
      if (n.id == 4) {
        n.target = target;
        n.args = {{"self", "relu", nullptr}, {"dim", "", std::move(dims)}, {"keepdim", "", true}};
      }
    return g;
  };
  ModelGraph amax = with_pool("aten.amax.default", {-1, -2});
  const Candidate c = BuiltinGenerator().generate(amax, amax.groups.at(kHead));
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  EXPECT_EQ(c.origin.rule, "cat_linear");
  EXPECT_NE(c.cuda_source.find("float nova_red = -INFINITY;"), std::string::npos) << c.cuda_source;
  EXPECT_NE(c.cuda_source.find("nova_red = nova::maximumf_(nova_red, v0);"), std::string::npos) << c.cuda_source;
  EXPECT_NE(c.cuda_source.find("nova_red = nova::warp_max(nova_red);"), std::string::npos) << c.cuda_source;
  EXPECT_NE(c.cuda_source.find("const float nova_x = nova_red;"), std::string::npos) << c.cuda_source;

  ModelGraph partial = with_pool("aten.mean.dim", {-1});
  const Candidate p = BuiltinGenerator().generate(partial, partial.groups.at(kHead));
  ASSERT_TRUE(p.declined.has_value()) << p.cuda_source;
  EXPECT_NE(p.declined->find("no builtin rule for aten.mean.dim"), std::string::npos) << *p.declined;
}

}  // namespace
}  // namespace nova
