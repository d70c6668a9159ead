// TimelineModel queries: the visible window against brute force, at most one item per pixel with
// every visible item accounted for exactly once, search over the whole trace, hit testing.
#include "core/trace/timeline_model.h"

#include <random>

#include <gtest/gtest.h>

#include "core/trace/trace_reader.h"
#include "support/synthetic_trace.h"
#include "support/test_paths.h"

namespace nova {
namespace {

// n kernels of random length (50..5000 ns) with random gaps on one stream, plus a few long ones on
// a second stream overlapping many of them.
std::shared_ptr<Trace> random_trace(int n, unsigned seed) {
  auto t = std::make_shared<Trace>();
  t->names = {"gemm_kernel", "elementwise_kernel", "long_copy"};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint64_t> len(50, 5000), gap(0, 3000);
  std::uint64_t now = 1000;
  for (int i = 0; i < n; ++i) {
    GpuActivity a;
    a.start = now;
    a.end = now + len(rng);
    a.stream = 7;
    a.name = i % 3 == 0 ? 0 : 1;
    a.correlation = static_cast<std::uint32_t>(i);
    t->activities.push_back(a);
    now = a.end + gap(rng);
  }
  for (int i = 0; i < 5; ++i) {
    GpuActivity a;
    a.start = 1000 + i * (now / 5);
    a.end = a.start + now / 7;
    a.stream = 9;
    a.name = 2;
    a.kind = ActivityKind::Memcpy;
    t->activities.push_back(a);
  }
  std::stable_sort(t->activities.begin(), t->activities.end(),
                   [](const GpuActivity& a, const GpuActivity& b) { return a.start < b.start; });
  return t;
}

class TimelineModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = random_trace(20000, 7);
    model_ = TimelineModel(trace_, AttributionResult{}, ModelGraph{});
  }
  std::shared_ptr<Trace> trace_;
  TimelineModel model_;
};

TEST_F(TimelineModelTest, RowsPerStreamSortedWithRunningEnds) {
  ASSERT_EQ(model_.rows().size(), 2u);
  EXPECT_EQ(model_.rows()[0].label, "GPU 0 stream 7");
  EXPECT_EQ(model_.rows()[0].items.size(), 20000u);
  EXPECT_EQ(model_.item_count(), 20005u);
  EXPECT_EQ(model_.begin_ns(), 1000u);
  EXPECT_EQ(model_.end_ns(), trace_->end_ns());
}

TEST_F(TimelineModelTest, VisibleWindowMatchesBruteForce) {
  std::mt19937 rng(3);
  for (std::size_t row = 0; row < model_.rows().size(); ++row) {
    const auto& items = model_.rows()[row].items;
    for (int k = 0; k < 200; ++k) {
      std::uniform_int_distribution<std::uint64_t> at(0, model_.end_ns() + 1000);
      std::uint64_t t0 = at(rng), t1 = t0 + at(rng) / 50 + 1;
      auto [first, last] = model_.visible(row, t0, t1);
      std::size_t expect = 0;
      for (const auto& it : items) expect += it.end() > t0 && it.start < t1;
      std::size_t got = 0;
      for (std::size_t i = first; i < last; ++i) got += items[i].end() > t0 && items[i].start < t1;
      EXPECT_EQ(got, expect) << "row " << row << " [" << t0 << ", " << t1 << ")";
      // Nothing outside [first, last) overlaps.
      for (std::size_t i = 0; i < first; ++i) ASSERT_LE(items[i].end(), t0);
      for (std::size_t i = last; i < items.size(); ++i) ASSERT_GE(items[i].start, t1);
    }
  }
}

TEST_F(TimelineModelTest, NeverMoreThanOneItemPerPixelAndNothingLost) {
  for (std::size_t row = 0; row < model_.rows().size(); ++row) {
    for (double zoom : {1.0, 0.1, 0.01, 0.001, 0.0001}) {
      for (int width : {1, 37, 800, 1920}) {
        std::uint64_t span = static_cast<std::uint64_t>((model_.end_ns() - model_.begin_ns()) * zoom) + 1;
        std::uint64_t t0 = model_.begin_ns() + (model_.end_ns() - model_.begin_ns()) / 3;
        std::uint64_t t1 = t0 + span;
        auto px = model_.reduce_per_pixel(row, t0, t1, width);
        auto [first, last] = model_.visible(row, t0, t1);
        ASSERT_LE(px.size(), static_cast<std::size_t>(width));
        std::size_t counted = 0;
        int prev_end = 0;
        for (const auto& p : px) {
          ASSERT_GE(p.x0, prev_end) << "overlapping pixels at zoom " << zoom << " width " << width;
          ASSERT_GT(p.x1, p.x0);
          ASSERT_LE(p.x1, width);
          prev_end = p.x1;
          counted += p.count;
        }
        EXPECT_EQ(counted, last - first) << "row " << row << " zoom " << zoom << " width " << width;
      }
    }
  }
}

TEST_F(TimelineModelTest, ZoomedInItemsLandOnTheirOwnPixels) {
  const auto& items = model_.rows()[0].items;
  std::uint64_t t0 = items[100].start, t1 = items[103].end();
  auto px = model_.reduce_per_pixel(0, t0, t1, 10000);
  ASSERT_GE(px.size(), 4u);
  EXPECT_EQ(px[0].first, 100u);
  EXPECT_EQ(px[0].count, 1u);
  EXPECT_EQ(px[0].x0, 0);
  double ns_per_px = static_cast<double>(t1 - t0) / 10000;
  EXPECT_NEAR(px[1].x0, (items[101].start - t0) / ns_per_px, 1.0);
}

TEST_F(TimelineModelTest, SearchCoversTheWholeTraceAndHitTestingFindsItems) {
  auto hits = model_.find("GEMM");
  EXPECT_EQ(hits.size(), static_cast<std::size_t>((20000 + 2) / 3));
  for (std::size_t i = 1; i < hits.size(); ++i) {
    const auto& a = model_.rows()[hits[i - 1].first].items[hits[i - 1].second];
    const auto& b = model_.rows()[hits[i].first].items[hits[i].second];
    EXPECT_LE(a.start, b.start);
  }
  EXPECT_TRUE(model_.find("no such kernel").empty());
  const auto& it = model_.rows()[0].items[500];
  EXPECT_EQ(model_.item_at(0, (it.start + it.end()) / 2), 500);
  EXPECT_EQ(model_.item_at(0, 0), -1);
}

TEST(TimelineModel, OpRowAndNodeLookupFromAttribution) {
  auto p = test::seed_profile(test::scratch_dir("timeline_model_ops"), 3);
  TimelineModel m(p.trace, p.attribution, p.graph);
  ASSERT_EQ(m.rows().size(), 3u);  // ops, stream 7, NVTX
  EXPECT_EQ(m.rows()[0].kind, TimelineRow::Kind::Ops);
  EXPECT_EQ(m.rows()[0].items.size(), 12u);
  EXPECT_EQ(m.name(m.rows()[0].items[0].name), "convolution [0]");
  EXPECT_EQ(m.rows()[2].kind, TimelineRow::Kind::Nvtx);
  auto [row, index] = m.first_item_of_node(3);
  ASSERT_EQ(row, 1);
  EXPECT_EQ(m.rows()[1].items[index].node, 3);
  EXPECT_NE(m.name(m.rows()[1].items[index].name).find("CUDAFunctor_add"), std::string::npos);
}

}  // namespace
}  // namespace nova
