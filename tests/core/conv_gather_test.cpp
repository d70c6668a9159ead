// The implicit-GEMM convolution's gathers (kernels/nova/conv_gather.cuh), compiled for the host: a
// convolution summed through ConvNchwGather's (and ConvNchwTableGather's, and for 3-D
// ConvNcdhwTableGather's) columns and patches equals the convolution summed by its definition, with
// padding, strides, dilation and groups, and what lies past K or past the last pixel reads as zero. The tensor-core tile around it is exercised on the GPU (validation of the
// conv2d_tf32x3 candidates); this pins the index arithmetic it is fed with.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/device_code_on_host.h"
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

// A grouped transposed 3-D convolution with a different stride, padding and dilation along each axis,
// an output padding along width, and an axis (depth) whose stride exceeds its kernel's reach, so that
// some phases have no taps at all.
namespace transposed {
constexpr int kN = 2, kC = 4, kD = 3, kH = 4, kW = 5, kGroups = 2, kCout = 6, kKD = 1, kR = 3, kS = 4;
constexpr int kSD = 2, kSH = 2, kSW = 3, kPD = 0, kPH = 1, kPW = 2, kDD = 1, kDH = 2, kDW = 1, kOPW = 1;
constexpr int kOD = (kD - 1) * kSD - 2 * kPD + kDD * (kKD - 1) + 1;
constexpr int kOH = (kH - 1) * kSH - 2 * kPH + kDH * (kR - 1) + 1;
constexpr int kOW = (kW - 1) * kSW - 2 * kPW + kDW * (kS - 1) + kOPW + 1;
constexpr int kCinG = kC / kGroups, kCoutG = kCout / kGroups, kTaps = kKD * kR * kS;
// Room for any phase's K here; the test checks the gather's own claim of the busiest phase's K.
constexpr int kKPad = 64;
using GatherT = ConvTransposedTableGather<kCinG, kD, kH, kW, kKD, kR, kS, kSD, kSH, kSW, kPD, kPH, kPW, kDD, kDH, kDW,
                                         kOD, kOH, kOW, kKPad>;

struct Problem {
  std::vector<float> x = std::vector<float>(kN * kC * kD * kH * kW);
  std::vector<float> w = std::vector<float>(kC * kCoutG * kTaps);  // [cin][cout_g][t][r][s], as PyTorch stores it
  std::vector<int2> taps = std::vector<int2>(kKPad);
  Problem() {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : x) v = u(rng);
    for (auto& v : w) v = u(rng);
  }
  GatherT gather(int group, int phase) {
    GatherT g{x.data() + group * kCinG * kD * kH * kW, kC * kD * kH * kW, kN, taps.data()};
    g.phase(phase);
    g.fill(taps.data());
    return g;
  }
  float weight(int ci, int co_local, int rd, int rh, int rw) const {
    return w[(((ci * kCoutG + co_local) * kKD + rd) * kR + rh) * kS + rw];
  }
  // out[img][co][od][oh][ow] by the definition: o = i * stride - padding + r * dilation along each axis.
  double direct(int img, int co, int od, int oh, int ow) const {
    const int g = co / kCoutG, co_local = co % kCoutG;
    double sum = 0;
    for (int ci = g * kCinG; ci < (g + 1) * kCinG; ++ci)
      for (int id = 0; id < kD; ++id)
        for (int ih = 0; ih < kH; ++ih)
          for (int iw = 0; iw < kW; ++iw)
            for (int rd = 0; rd < kKD; ++rd)
              for (int rh = 0; rh < kR; ++rh)
                for (int rw = 0; rw < kS; ++rw)
                  if (id * kSD - kPD + rd * kDD == od && ih * kSH - kPH + rh * kDH == oh &&
                      iw * kSW - kPW + rw * kDW == ow)
                    sum += double(weight(ci, co_local, rd, rh, rw)) * x[(((img * kC + ci) * kD + id) * kH + ih) * kW + iw];
    return sum;
  }
};

void expect_transposed_definition() {
  static_assert(kOD == 5 && kOH == 9 && kOW == 13 && GatherT::kPhases == 12, "the geometry this test was written for");
  Problem p;
  std::vector<int> visits(kN * kCout * kOD * kOH * kOW, 0);
  int phases_without_taps = 0, busiest = 0;
  for (int group = 0; group < kGroups; ++group)
    for (int phase = 0; phase < GatherT::kPhases; ++phase) {
      SCOPED_TRACE(fmt::format("group {} phase {}", group, phase));
      const GatherT g = p.gather(group, phase);
      phases_without_taps += g.k == 0;
      busiest = std::max(busiest, g.k);
      const int taps = g.td * g.th * g.tw;
      for (int n = 0; n < g.pixels; ++n) {
        const GatherT::Col col = g.column(n);
        int img, od, oh, ow;
        g.output(n, img, od, oh, ow);
        ASSERT_TRUE(img < kN && od < kOD && oh < kOH && ow < kOW) << img << " " << od << " " << oh << " " << ow;
        for (int co_local = 0; co_local < kCoutG; ++co_local) {
          const int co = group * kCoutG + co_local;
          ++visits[(((img * kCout + co) * kOD + od) * kOH + oh) * kOW + ow];
          double sum = 0;
          for (int kk = 0; kk < kKPad; ++kk) {
            const float* at = nullptr;
            if (!g.at(col, kk, at)) continue;
            ASSERT_LT(kk, g.k) << "k past the phase's K reads as zero";
            EXPECT_GE(at, p.x.data());
            EXPECT_LT(at, p.x.data() + p.x.size());
            const int ci = kk / taps;
            int rd, rh, rw;
            g.tap(kk - ci * taps, rd, rh, rw);
            sum += double(p.weight(group * kCinG + ci, co_local, rd, rh, rw)) * *at;
          }
          EXPECT_NEAR(sum, p.direct(img, co, od, oh, ow), 1e-9)
              << "image " << img << " channel " << co << " at " << od << "," << oh << "," << ow;
        }
      }
      // A column past the phase's last pixel reads nothing.
      const GatherT::Col past = g.column(g.pixels);
      const float* at = nullptr;
      for (int kk = 0; kk < kKPad; ++kk) EXPECT_FALSE(g.at(past, kk, at)) << kk;
    }
  EXPECT_GT(phases_without_taps, 0) << "depth's stride 2 over a 1-tap kernel leaves odd planes to the bias alone";
  // The table's size: the busiest phase's K, here every height tap (dilation 2 and stride 2 share a factor).
  EXPECT_EQ(busiest, GatherT::kMaxK);
  EXPECT_EQ(GatherT::kMaxK, kCinG * 1 * 3 * 2);
  // The phases cover every output once.
  for (std::size_t i = 0; i < visits.size(); ++i) ASSERT_EQ(visits[i], 1) << i;
}

}  // namespace transposed

TEST(ConvGather, A3dConvolutionSummedThroughTheTableGatherEqualsItsDefinition) { three::expect_3d_definition(); }

TEST(ConvGather, ATransposedConvolutionSummedPhaseByPhaseEqualsItsDefinition) {
  transposed::expect_transposed_definition();
}

TEST(ConvGather, The3dTablesPaddingAndColumnsPastTheEndReadAsZero) { three::expect_3d_padding_reads_zero(); }

}  // namespace
}  // namespace nova
