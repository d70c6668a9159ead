// The depthwise convolution's band (kernels/nova/depthwise.cuh), compiled for the host: a plane computed
// band by band, every thread of a block loading its share of the tile and then summing its outputs, equals
// the convolution by its definition, with padding, stride, dilation and an asymmetric kernel, and every
// output of the plane is given exactly once. The generated kernel around it runs on the GPU (validation
// of the conv2d_depthwise candidates); this pins the index arithmetic.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "support/device_code_on_host.h"
#include "kernels/nova/depthwise.cuh"

namespace nova {
namespace {

// depthwise_grouped_conv_relu's geometry (3x5 kernel, padding (2, 2), dilation (2, 1)) on a small plane,
// with a stride along height, and a band that does not divide the output rows.
constexpr int kH = 11, kW = 9, kR = 3, kS = 5, kSH = 2, kSW = 1, kPH = 2, kPW = 2, kDH = 2, kDW = 1;
constexpr int kOH = (kH + 2 * kPH - kDH * (kR - 1) - 1) / kSH + 1;
constexpr int kOW = (kW + 2 * kPW - kDW * (kS - 1) - 1) / kSW + 1;
constexpr int kBand = 3, kThreads = 7;
using Band = DepthwiseBand<kH, kW, kR, kS, kSH, kSW, kPH, kPW, kDH, kDW, kOH, kOW, kBand>;

TEST(DepthwiseBand, APlaneComputedBandByBandEqualsTheConvolutionByItsDefinition) {
  static_assert(kOH == 6 && kOW == 9 && Band::kBands == 2, "the geometry this test was written for");
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(kH * kW), w(kR * kS);
  for (auto& v : x) v = u(rng);
  for (auto& v : w) v = u(rng);
  std::vector<int> given(kOH * kOW, 0);
  for (int band = 0; band < Band::kBands; ++band) {
    std::vector<float> tile(Band::kSmemFloats, -99.0f);
    for (int tid = 0; tid < kThreads; ++tid) Band::load(x.data(), w.data(), band, tile.data(), tid, kThreads);
    for (float v : tile) ASSERT_NE(v, -99.0f) << "the threads together fill the whole tile";
    for (int tid = 0; tid < kThreads; ++tid)
      Band::compute(tile.data(), band, tid, kThreads, [&](int oh, int ow, float acc) {
        ASSERT_TRUE(oh >= band * kBand && oh < std::min(kOH, (band + 1) * kBand) && ow >= 0 && ow < kOW);
        ++given[oh * kOW + ow];
        double sum = 0;
        for (int r = 0; r < kR; ++r)
          for (int s = 0; s < kS; ++s) {
            const int ih = oh * kSH - kPH + r * kDH, iw = ow * kSW - kPW + s * kDW;
            if (ih >= 0 && ih < kH && iw >= 0 && iw < kW) sum += double(w[r * kS + s]) * x[ih * kW + iw];
          }
        EXPECT_NEAR(acc, sum, 1e-5) << oh << "," << ow;
      });
  }
  for (int i = 0; i < kOH * kOW; ++i) EXPECT_EQ(given[i], 1) << i;
}

}  // namespace
}  // namespace nova
