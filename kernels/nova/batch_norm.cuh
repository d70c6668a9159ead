// Nova: batch norm's per-channel statistics from per-plane partials (BatchNormTrainRule's second pass).
// Device code only (no host headers, no includes): compiles with NVRTC and nvcc alike.
#pragma once

namespace nova {

// A channel's statistics over its planes: the mean, the sum of squared deviations from it (m2), and how
// many values they cover.
struct ChannelStats {
  double mean, m2, count;
};

// Combines `planes` partials (mean, m2) of `per_plane` values each, partials[k * stride] for k = 0, 1, ...
// in that order (Chan, Golub and LeVeque's pairwise update, in double): the same result for every block
// that asks, whatever the scheduling.
__device__ __forceinline__ ChannelStats combine_planes(const float2* partials, int planes, int stride,
                                                       double per_plane) {
  ChannelStats s{0.0, 0.0, 0.0};
  for (int k = 0; k < planes; ++k) {
    const float2 p = partials[(long long)k * stride];
    const double total = s.count + per_plane, delta = (double)p.x - s.mean;
    s.mean += delta * per_plane / total;
    s.m2 += (double)p.y + delta * delta * s.count * per_plane / total;
    s.count = total;
  }
  return s;
}

}  // namespace nova
