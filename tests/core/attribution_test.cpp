// Attribution and ranking on a seed-like synthetic trace whose kernel times are known: per node and
// per group GPU time, share, calls, launches, kernels, achieved rates, roofline floor and headroom.
#include "core/trace/attribution.h"

#include <gtest/gtest.h>

#include "core/trace/hot_op_ranking.h"
#include "core/trace/trace_reader.h"
#include "support/synthetic_trace.h"
#include "support/test_paths.h"

namespace nova {
namespace {

class AttributionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: CTest runs the tests of a fixture in parallel processes.
    auto dir = test::scratch_dir(std::string("attribution_") +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    test::write_seed_trace(dir / "seed.novatrace", kIters);
    trace_ = TraceReader::read(dir / "seed.novatrace");
    graph_ = test::seed_graph();
  }
  static constexpr int kIters = 4;
  Trace trace_;
  ModelGraph graph_;
};

TEST_F(AttributionTest, EveryKernelGoesToTheNodeThatLaunchedIt) {
  AttributionResult a = Attribution::compute(trace_, graph_);
  const double per_iter = 17700 + 6100 + 12400 + 3300 + 2000;
  EXPECT_DOUBLE_EQ(a.total_gpu_ns, kIters * per_iter);
  EXPECT_NEAR(a.attributed_fraction, (per_iter - 2000) / per_iter, 1e-12);
  EXPECT_EQ(a.iterations, kIters);
  ASSERT_EQ(a.nodes.size(), 4u);  // clone launches nothing
  const OpStats* conv = a.node(0);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->name, "convolution");
  EXPECT_EQ(conv->op_class, "convolution");
  EXPECT_DOUBLE_EQ(conv->gpu_ns, kIters * 17700.0);
  EXPECT_NEAR(conv->share, 17700 / per_iter, 1e-12);
  EXPECT_EQ(conv->calls, kIters);
  EXPECT_EQ(conv->kernels, kIters);
  EXPECT_EQ(conv->launches, kIters);
  ASSERT_FALSE(conv->top_kernels.empty());
  EXPECT_NE(conv->top_kernels[0].find("implicit_convolve_sgemm"), std::string::npos);
  // Roofline: floor = max(bytes / 4.25e12, flops / 50.7e12) per call; headroom = time per call / floor.
  double floor_ns = std::max(7971328 / 4.25e12, 113246208 / 50.7e12) * 1e9;
  EXPECT_NEAR(conv->floor_ns, floor_ns, 1e-9);
  EXPECT_NEAR(conv->headroom, 17700 / floor_ns, 1e-9);
  EXPECT_NEAR(conv->achieved_bytes_per_s, 7971328 / 17700e-9, 1.0);
  EXPECT_NEAR(conv->achieved_flops_per_s, 113246208 / 17700e-9, 1.0);
  EXPECT_EQ(a.unattributed.kernels, 0);
  EXPECT_DOUBLE_EQ(a.unattributed.gpu_ns, kIters * 2000.0);
  for (std::size_t i = 0; i < trace_.activities.size(); ++i)
    EXPECT_EQ(a.node_of_activity[i] < 0, trace_.activities[i].kind == ActivityKind::Memcpy) << i;
}

TEST_F(AttributionTest, GroupsSumTheirMembersAndUseBoundaryBytes) {
  AttributionResult a = Attribution::compute(trace_, graph_);
  ASSERT_EQ(a.groups.size(), 1u);
  const OpStats& g = a.groups[0];
  EXPECT_EQ(g.level, OpStats::Level::Group);
  EXPECT_DOUBLE_EQ(g.gpu_ns, kIters * (17700.0 + 6100 + 12400 + 3300));
  EXPECT_EQ(g.calls, kIters);
  EXPECT_EQ(g.kernels, 4 * kIters);
  EXPECT_EQ(g.name, "conv+epilogue #0: convolution, minimum, add, mul");
  double floor_ns = std::max(graph_.groups[0].bytes / 4.25e12, graph_.groups[0].flops / 50.7e12) * 1e9;
  EXPECT_NEAR(g.headroom, 39500 / floor_ns, 1e-9);
}

TEST_F(AttributionTest, CeilingsCanBeOverridden) {
  AttributionResult a = Attribution::compute(trace_, graph_, DeviceCeilings{1e12, 1e15});
  const OpStats* add = a.node(3);
  ASSERT_NE(add, nullptr);
  EXPECT_NEAR(add->floor_ns, 14745664 / 1e12 * 1e9, 1e-9);
}

TEST_F(AttributionTest, OpRowSpansFollowNodeChanges) {
  AttributionResult a = Attribution::compute(trace_, graph_);
  ASSERT_EQ(a.spans.size(), 4u * kIters);
  EXPECT_EQ(a.spans[0].node, 0);
  EXPECT_EQ(a.spans[1].node, 2);
  EXPECT_EQ(a.spans[0].end - a.spans[0].start, 17700u);
}

TEST_F(AttributionTest, WithoutAGraphNodesAreNamedByIdAndHaveNoFloor) {
  AttributionResult a = Attribution::compute(trace_, ModelGraph{});
  ASSERT_NE(a.node(4), nullptr);
  EXPECT_EQ(a.node(4)->name, "node 4");
  EXPECT_EQ(a.node(4)->headroom, 0);
  EXPECT_TRUE(a.groups.empty());
}

TEST_F(AttributionTest, RankingOrdersByGpuTimeAndSharesAddUp) {
  AttributionResult a = Attribution::compute(trace_, graph_);
  auto rows = HotOpRanking::rank(a, HotOpRanking::By::Node);
  ASSERT_EQ(rows.size(), 5u);
  std::vector<int> ids;
  for (const auto& r : rows) ids.push_back(r.id);
  EXPECT_EQ(ids, (std::vector<int>{0, 3, 2, 4, -1}));
  double share = 0;
  for (const auto& r : rows) share += r.share;
  EXPECT_NEAR(share, 1.0, 1e-12);
  auto groups = HotOpRanking::rank(a, HotOpRanking::By::Group, false);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].level, OpStats::Level::Group);
  std::string text = HotOpRanking::to_text(rows);
  EXPECT_NE(text.find("[0] convolution"), std::string::npos) << text;
  EXPECT_NE(text.find("(outside graph nodes)"), std::string::npos) << text;
  EXPECT_NE(text.find("17.70"), std::string::npos) << text;  // us per call of the convolution
}

}  // namespace
}  // namespace nova
