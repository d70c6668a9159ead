// Median and IQR as the benchmark reports them (numpy's linear-interpolation quantiles).
#include "core/verify/sample_summary.h"

#include <cmath>

#include <gtest/gtest.h>

namespace nova {
namespace {

TEST(SampleSummary, MatchesNumpyQuantilesOnOddAndEvenCounts) {
  // numpy.percentile([7, 1, 3, 5, 9], [25, 50, 75]) == [3, 5, 7]
  SampleSummary odd = SampleSummary::of({7, 1, 3, 5, 9});
  EXPECT_EQ(odd.n, 5);
  EXPECT_DOUBLE_EQ(odd.median, 5);
  EXPECT_DOUBLE_EQ(odd.q1, 3);
  EXPECT_DOUBLE_EQ(odd.q3, 7);
  EXPECT_DOUBLE_EQ(odd.iqr, 4);
  // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) == [1.75, 2.5, 3.25]
  SampleSummary even = SampleSummary::of({4, 2, 1, 3});
  EXPECT_DOUBLE_EQ(even.median, 2.5);
  EXPECT_DOUBLE_EQ(even.q1, 1.75);
  EXPECT_DOUBLE_EQ(even.q3, 3.25);
  EXPECT_DOUBLE_EQ(even.mean, 2.5);
  EXPECT_DOUBLE_EQ(even.min, 1);
  EXPECT_DOUBLE_EQ(even.max, 4);
}

TEST(SampleSummary, MedianResistsAnOutlierThatMovesTheMean) {
  std::vector<double> s(99, 10.0);
  s.push_back(10000.0);  // one preempted call
  SampleSummary r = SampleSummary::of(s);
  EXPECT_DOUBLE_EQ(r.median, 10.0);
  EXPECT_DOUBLE_EQ(r.iqr, 0.0);
  EXPECT_GT(r.mean, 100.0);
}

TEST(SampleSummary, EmptyIsZeroCountAndNanIsRefused) {
  EXPECT_EQ(SampleSummary::of({}).n, 0);
  EXPECT_EQ(SampleSummary::of({3.5}).median, 3.5);
  EXPECT_THROW(SampleSummary::of({1.0, std::nan("")}), std::invalid_argument);
}

}  // namespace
}  // namespace nova
