// The implicit-GEMM convolution's gathers (kernels/nova/conv_gather.cuh), compiled for the host: a
// convolution summed through ConvNchwGather's (and ConvNchwTableGather's, and for 3-D
// ConvNcdhwTableGather's) columns and patches equals the convolution summed by its definition, with
// padding, strides, dilation and groups, and what lies past K or past the last pixel reads as zero. The tensor-core tile around it is exercised on the GPU (validation of the
// conv2d_tf32x3 candidates); this pins the index arithmetic it is fed with.
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
// What the gathers use of CUDA's device vocabulary, for one host thread filling the whole table.
struct int2 {
  int x, y;
};
inline int2 make_int2(int x, int y) { return {x, y}; }
static const struct {
  int x = 0;
} threadIdx;
static const struct {
  int x = 1;
} blockDim;
#include "kernels/nova/conv_gather.cuh"

namespace nova {
namespace {

// A grouped convolution with every geometry argument away from its default.
constexpr int kN = 2, kC = 6, kH = 7, kW = 9, kGroups = 2, kCout = 4, kR = 3, kS = 2;
constexpr int kSH = 2, kSW = 1, kPH = 1, kPW = 2, kDH = 2, kDW = 1;
constexpr int kOH = (kH + 2 * kPH - kDH * (kR - 1) - 1) / kSH + 1;
constexpr int kOW = (kW + 2 * kPW - kDW * (kS - 1) - 1) / kSW + 1;
constexpr int kCinG = kC / kGroups, kCoutG = kCout / kGroups, kK = kCinG * kR * kS;
constexpr int kKPad = (kK + 31) / 32 * 32;
using Gather = ConvNchwGather<kCinG, kH, kW, kR, kS, kSH, kSW, kPH, kPW, kDH, kDW, kOH, kOW>;
using TableGather = ConvNchwTableGather<kCinG, kH, kW, kR, kS, kSH, kSW, kPH, kPW, kDH, kDW, kOH, kOW, kKPad>;

struct Problem {
  std::vector<float> x = std::vector<float>(kN * kC * kH * kW);
  std::vector<float> w = std::vector<float>(kCout * kK);  // [cout][cin_g][r][s], as PyTorch stores it
  Problem() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : x) v = u(rng);
    for (auto& v : w) v = u(rng);
  }
  // out[img][co][oh][ow] by the definition of a convolution.
  double direct(int img, int co, int oh, int ow) const {
    const int g = co / kCoutG;
    double sum = 0;
    for (int ci = 0; ci < kCinG; ++ci)
      for (int r = 0; r < kR; ++r)
        for (int s = 0; s < kS; ++s) {
          const int ih = oh * kSH - kPH + r * kDH, iw = ow * kSW - kPW + s * kDW;
          if (ih < 0 || ih >= kH || iw < 0 || iw >= kW) continue;
          sum += double(w[(co * kCinG + ci) * kR * kS + r * kS + s]) *
                 x[((img * kC + g * kCinG + ci) * kH + ih) * kW + iw];
        }
    return sum;
  }
  Gather gather(int group) const { return Gather{x.data() + group * kCinG * kH * kW, kC * kH * kW, kN * kOH * kOW}; }
  std::vector<int2> taps = std::vector<int2>(kKPad);
  TableGather table_gather(int group) {
    TableGather g{x.data() + group * kCinG * kH * kW, kC * kH * kW, kN * kOH * kOW, taps.data()};
    g.fill(taps.data());
    return g;
  }
};

// One output channel's sum through gather g at column col: weights w_row[k] times the gathered
// patch, every element read inside x; counts the taps that read as zero (the padding) in padded.
template <class G>
double sum_through(const G& g, const typename G::Col& col, const float* w_row, int K, const std::vector<float>& x,
                   int& padded) {
  double sum = 0;
  for (int k = 0; k < K; ++k) {
    const float* at = nullptr;
    if (g.at(col, k, at)) {
      EXPECT_GE(at, x.data());
      EXPECT_LT(at, x.data() + x.size());
      sum += double(w_row[k]) * *at;
    } else {
      ++padded;
    }
  }
  return sum;
}

// Sums the convolution through gather g for every output of one group: returns how many taps read
// as zero (the padding).
template <class G>
int expect_definition(const Problem& p, const G& g, int group) {
  int padded = 0;
  for (int n = 0; n < kN * kOH * kOW; ++n) {
    const typename G::Col col = g.column(n);
    const int img = n / (kOH * kOW), oh = n / kOW % kOH, ow = n % kOW;
    for (int co_local = 0; co_local < kCoutG; ++co_local) {
      const int co = group * kCoutG + co_local;
      const double sum = sum_through(g, col, p.w.data() + co * kK, kK, p.x, padded);
      EXPECT_NEAR(sum, p.direct(img, co, oh, ow), 1e-9) << "image " << img << " channel " << co << " at " << oh << ","
                                                        << ow;
    }
  }
  return padded;
}

TEST(ConvGather, AConvolutionSummedThroughTheGatherEqualsItsDefinition) {
  static_assert(kOH == 3 && kOW == 12, "the geometry this test was written for");
  Problem p;
  for (int group = 0; group < kGroups; ++group) {
    SCOPED_TRACE(group);
    EXPECT_GT(expect_definition(p, p.gather(group), group), 0) << "the geometry reaches into the padding";
    // The table's gather reads the same elements.
    EXPECT_EQ(expect_definition(p, p.table_gather(group), group), expect_definition(p, p.gather(group), group));
  }
}

TEST(ConvGather, PastKAndPastTheLastPixelReadAsZero) {
  Problem p;
  const Gather g = p.gather(1);
  const float* at = nullptr;
  // An interior pixel: every tap in the image, none past K.
  const Gather::Col inside = g.column(1 * kOH * kOW + 1 * kOW + 5);
  for (int k = 0; k < kK; ++k) {
    ASSERT_TRUE(g.at(inside, k, at)) << k;
    EXPECT_GE(at, p.x.data());
    EXPECT_LT(at, p.x.data() + p.x.size());
  }
  EXPECT_FALSE(g.at(inside, kK, at));
  EXPECT_FALSE(g.at(inside, kK + 31, at));
  // A tile's columns past the last pixel.
  const Gather::Col past = g.column(kN * kOH * kOW);
  for (int k = 0; k < kK; ++k) EXPECT_FALSE(g.at(past, k, at)) << k;
  EXPECT_FALSE(g.at(g.column(kN * kOH * kOW + 100), 0, at));
}

TEST(ConvGather, TheTablesPaddingAndColumnsPastTheEndReadAsZero) {
  Problem p;
  const TableGather g = p.table_gather(1);
  const float* at = nullptr;
  const TableGather::Col inside = g.column(1 * kOH * kOW + 1 * kOW + 5);
  for (int k = 0; k < kK; ++k) EXPECT_TRUE(g.at(inside, k, at)) << k;
  static_assert(kKPad > kK, "the geometry pads K");
  for (int k = kK; k < kKPad; ++k) EXPECT_FALSE(g.at(inside, k, at)) << k;
  const TableGather::Col past = g.column(kN * kOH * kOW);
  for (int k = 0; k < kKPad; ++k) EXPECT_FALSE(g.at(past, k, at)) << k;
}

// A grouped 3-D convolution (NCDHW) with a different stride, padding and dilation along each axis.
namespace three {
constexpr int kN = 2, kC = 4, kD = 5, kH = 6, kW = 7, kGroups = 2, kCout = 4, kKD = 2, kR = 3, kS = 2;
constexpr int kSD = 2, kSH = 1, kSW = 2, kPD = 1, kPH = 2, kPW = 0, kDD = 2, kDH = 1, kDW = 3;
constexpr int kOD = (kD + 2 * kPD - kDD * (kKD - 1) - 1) / kSD + 1;
constexpr int kOH = (kH + 2 * kPH - kDH * (kR - 1) - 1) / kSH + 1;
constexpr int kOW = (kW + 2 * kPW - kDW * (kS - 1) - 1) / kSW + 1;
constexpr int kCinG = kC / kGroups, kCoutG = kCout / kGroups, kTaps = kKD * kR * kS, kK = kCinG * kTaps;
constexpr int kKPad = (kK + 31) / 32 * 32, kPixels = kN * kOD * kOH * kOW;
using Gather3 = ConvNcdhwTableGather<kCinG, kD, kH, kW, kKD, kR, kS, kSD, kSH, kSW, kPD, kPH, kPW, kDD, kDH, kDW, kOD,
                                     kOH, kOW, kKPad>;

struct Volume {
  std::vector<float> x = std::vector<float>(kN * kC * kD * kH * kW);
  std::vector<float> w = std::vector<float>(kCout * kK);  // [cout][cin_g][t][r][s], as PyTorch stores it
  std::vector<int2> taps = std::vector<int2>(kKPad);
  Volume() {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : x) v = u(rng);
    for (auto& v : w) v = u(rng);
  }
  Gather3 gather(int group) {
    Gather3 g{x.data() + group * kCinG * kD * kH * kW, kC * kD * kH * kW, kPixels, taps.data()};
    g.fill(taps.data());
    return g;
  }
  // out[img][co][od][oh][ow] by the definition of a convolution.
  double direct(int img, int co, int od, int oh, int ow) const {
    const int g = co / kCoutG;
    double sum = 0;
    for (int ci = 0; ci < kCinG; ++ci)
      for (int t = 0; t < kKD; ++t)
        for (int r = 0; r < kR; ++r)
          for (int s = 0; s < kS; ++s) {
            const int id = od * kSD - kPD + t * kDD, ih = oh * kSH - kPH + r * kDH, iw = ow * kSW - kPW + s * kDW;
            if (id < 0 || id >= kD || ih < 0 || ih >= kH || iw < 0 || iw >= kW) continue;
            sum += double(w[co * kK + ((ci * kKD + t) * kR + r) * kS + s]) *
                   x[(((img * kC + g * kCinG + ci) * kD + id) * kH + ih) * kW + iw];
          }
    return sum;
  }
};

void expect_3d_definition() {
  static_assert(kOD == 3 && kOH == 8 && kOW == 2, "the geometry this test was written for");
  Volume v;
  for (int group = 0; group < kGroups; ++group) {
    SCOPED_TRACE(group);
    const Gather3 g = v.gather(group);
    int padded = 0;
    for (int n = 0; n < kPixels; ++n) {
      const Gather3::Col col = g.column(n);
      const int img = n / (kOD * kOH * kOW), od = n / (kOH * kOW) % kOD, oh = n / kOW % kOH, ow = n % kOW;
      for (int co_local = 0; co_local < kCoutG; ++co_local) {
        const int co = group * kCoutG + co_local;
        const double sum = sum_through(g, col, v.w.data() + co * kK, kK, v.x, padded);
        EXPECT_NEAR(sum, v.direct(img, co, od, oh, ow), 1e-9)
            << "image " << img << " channel " << co << " at " << od << "," << oh << "," << ow;
      }
    }
    EXPECT_GT(padded, 0) << "the geometry reaches into the padding along some axis";
  }
}

void expect_3d_padding_reads_zero() {
  Volume v;
  const Gather3 g = v.gather(1);
  const float* at = nullptr;
  // Image 1, od 1, oh 3, ow 0: every tap inside the volume (id 1, 3; ih 1..3; iw 0, 3).
  const Gather3::Col inside = g.column(((1 * kOD + 1) * kOH + 3) * kOW + 0);
  for (int k = 0; k < kK; ++k) EXPECT_TRUE(g.at(inside, k, at)) << k;
  static_assert(kKPad > kK, "the geometry pads K");
  for (int k = kK; k < kKPad; ++k) EXPECT_FALSE(g.at(inside, k, at)) << k;
  const Gather3::Col past = g.column(kPixels);
  for (int k = 0; k < kKPad; ++k) EXPECT_FALSE(g.at(past, k, at)) << k;
}

}  // namespace three

TEST(ConvGather, A3dConvolutionSummedThroughTheTableGatherEqualsItsDefinition) { three::expect_3d_definition(); }

TEST(ConvGather, The3dTablesPaddingAndColumnsPastTheEndReadAsZero) { three::expect_3d_padding_reads_zero(); }

}  // namespace
}  // namespace nova
