// The 95% interval of a speedup (RatioInterval), on synthetic samples with a known answer and on
// benchmarks recorded on the H200 (tests/fixtures/bench): a clear win lies above 1.0, a measured loss
// below it, and equal distributions give an interval around 1.0 (a tie).
#include "core/verify/ratio_interval.h"

#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "core/verify/benchmark_result.h"
#include "support/test_paths.h"

namespace nova {
namespace {

BenchmarkResult recorded(const std::string& name) {
  std::ifstream in(test::fixtures_dir() / "bench" / name);
  EXPECT_TRUE(in) << "missing fixture " << name;
  return nlohmann::json::parse(in).get<BenchmarkResult>();
}

std::optional<RatioInterval> of(const BenchmarkResult& b, const std::string& mode) {
  return RatioInterval::of(b.find("eager", mode)->samples, b.find("candidate", mode)->samples);
}

std::vector<double> noisy(double median, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(median, median * 0.05);
  std::vector<double> out(n);
  for (auto& v : out) v = d(rng);
  return out;
}

TEST(RatioInterval, RatioIsTheRatioOfMediansAndTheIntervalHoldsIt) {
  auto r = RatioInterval::of({10, 11, 12, 13, 100}, {5, 5.5, 6, 6.5, 50});
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->ratio, 2.0);
  EXPECT_TRUE(r->paired);
  EXPECT_LE(r->low, r->ratio);
  EXPECT_GE(r->high, r->ratio);
  // Samples that are exactly proportional, resampled as pairs, leave no doubt.
  EXPECT_DOUBLE_EQ(r->low, 2.0);
  EXPECT_DOUBLE_EQ(r->high, 2.0);
}

TEST(RatioInterval, EqualDistributionsGiveATieAndADistantOneAWinOrALoss) {
  auto tie = RatioInterval::of(noisy(20, 200, 1), noisy(20, 200, 2));
  ASSERT_TRUE(tie);
  EXPECT_FALSE(tie->above_one());
  EXPECT_FALSE(tie->below_one());
  EXPECT_LT(tie->low, 1.0);
  EXPECT_GT(tie->high, 1.0);
  auto win = RatioInterval::of(noisy(20, 200, 3), noisy(18, 200, 4));  // 11% faster, 5% noise
  ASSERT_TRUE(win);
  EXPECT_TRUE(win->above_one());
  auto loss = RatioInterval::of(noisy(18, 200, 5), noisy(20, 200, 6));
  ASSERT_TRUE(loss);
  EXPECT_TRUE(loss->below_one());
  // Unequal counts are resampled side by side no more.
  auto unpaired = RatioInterval::of(noisy(20, 100, 7), noisy(10, 150, 8));
  ASSERT_TRUE(unpaired);
  EXPECT_FALSE(unpaired->paired);
  EXPECT_TRUE(unpaired->above_one());
}

TEST(RatioInterval, IsReproducibleAndRefusesEmptyOrNonPositiveSamples) {
  auto a = RatioInterval::of(noisy(20, 50, 9), noisy(19, 50, 10));
  auto b = RatioInterval::of(noisy(20, 50, 9), noisy(19, 50, 10));
  EXPECT_EQ(a, b);
  EXPECT_FALSE(RatioInterval::of({}, {1.0}));
  EXPECT_FALSE(RatioInterval::of({1.0}, {}));
  EXPECT_FALSE(RatioInterval::of({0.0, 0.0, 0.0, 0.0, 0.0}, {1.0, 1.0, 1.0, 1.0, 1.0}));
  EXPECT_FALSE(RatioInterval::of({1.0, 1.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0}));  // too few to bound anything
}

TEST(RatioInterval, OnH200RecordingsTheSeedConvWinsAndTheTransformerProjectionLosesWall) {
  // conv2d_min_add_multiply g0: 4.53x cold over 640 interleaved samples, 4.22x wall over 30.
  BenchmarkResult conv = recorded("conv2d_min_add_multiply_g0.h200.json");
  auto cold = of(conv, "cold"), wall = of(conv, "wall");
  ASSERT_TRUE(cold && wall);
  EXPECT_TRUE(cold->above_one());
  EXPECT_TRUE(wall->above_one());
  EXPECT_NEAR(cold->ratio, 4.5323, 1e-3);
  EXPECT_EQ(cold->n_baseline, 640);
  // tiny_transformer_block g3: cold 1.007x over 1519 samples, wall 0.82x: slower in wall.
  BenchmarkResult tiny = recorded("tiny_transformer_block_g3.h200.json");
  auto tiny_wall = of(tiny, "wall");
  ASSERT_TRUE(tiny_wall);
  EXPECT_TRUE(tiny_wall->below_one());
  EXPECT_EQ(tiny.verdict.kind, VerdictKind::declined);
  EXPECT_EQ(conv.verdict.kind, VerdictKind::ships);
}

}  // namespace
}  // namespace nova
