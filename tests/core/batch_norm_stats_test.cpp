// Batch norm's per-channel statistics from per-plane partials (kernels/nova/batch_norm.cuh), compiled for
// the host: planes summarized as the first pass of BatchNormTrainRule does (in float: the plane's mean, then
// its sum of squared deviations from it), combined in image order, give the channel's mean and variance
// as computed directly over all its values in double, for planes of very different means and spreads.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "support/device_code_on_host.h"
#include "kernels/nova/batch_norm.cuh"

namespace nova {
namespace {

TEST(BatchNormStats, PlanePartialsCombinedInOrderGiveTheChannelsMeanAndVariance) {
  constexpr int kImages = 16, kChannels = 3, kSpatial = 8192;
  std::mt19937 rng(17);
  std::vector<float> x(kImages * kChannels * kSpatial);
  for (int plane = 0; plane < kImages * kChannels; ++plane) {
    // Each plane its own offset and spread: what an activation after a convolution looks like.
    std::normal_distribution<float> d(0.5f * float(plane % 7) - 1.0f, 0.1f + 0.3f * float(plane % 5));
    for (int i = 0; i < kSpatial; ++i) x[plane * kSpatial + i] = d(rng);
  }
  // Pass 1 as the kernel computes it: float sums.
  std::vector<float2> partials(kImages * kChannels);
  for (int plane = 0; plane < kImages * kChannels; ++plane) {
    float s = 0.0f;
    for (int i = 0; i < kSpatial; ++i) s += x[plane * kSpatial + i];
    const float mean = s / kSpatial;
    float q = 0.0f;
    for (int i = 0; i < kSpatial; ++i) {
      const float dv = x[plane * kSpatial + i] - mean;
      q = std::fma(dv, dv, q);
    }
    partials[plane] = make_float2(mean, q);
  }
  for (int c = 0; c < kChannels; ++c) {
    SCOPED_TRACE(c);
    const ChannelStats st = combine_planes(partials.data() + c, kImages, kChannels, double(kSpatial));
    EXPECT_EQ(st.count, double(kImages) * kSpatial);
    double sum = 0;
    for (int n = 0; n < kImages; ++n)
      for (int i = 0; i < kSpatial; ++i) sum += x[(n * kChannels + c) * kSpatial + i];
    const double mean = sum / st.count;
    double m2 = 0;
    for (int n = 0; n < kImages; ++n)
      for (int i = 0; i < kSpatial; ++i) m2 += (x[(n * kChannels + c) * kSpatial + i] - mean) * (x[(n * kChannels + c) * kSpatial + i] - mean);
    EXPECT_NEAR(st.mean, mean, 1e-5 * (1 + std::abs(mean)));
    EXPECT_NEAR(st.m2 / st.count, m2 / st.count, 1e-4 * (m2 / st.count)) << "the biased variance";
    // Deterministic: every block of the channel combines the same partials in the same order, bit for bit.
    const ChannelStats again = combine_planes(partials.data() + c, kImages, kChannels, double(kSpatial));
    EXPECT_EQ(again.mean, st.mean);
    EXPECT_EQ(again.m2, st.m2);
  }
}

}  // namespace
}  // namespace nova
