#pragma once
// How sure a speedup is: the ratio of two medians (baseline over candidate) with a 95% confidence
// interval from a bootstrap of the raw samples. The worker interleaves the variants (A B A B ...),
// so where both sides have the same number of samples the i-th samples were taken side by side and
// are resampled as pairs (drift cancels); otherwise each side is resampled on its own. The resampling
// is seeded, so the same samples always give the same interval. A ratio is a win only when `low` is
// above 1.0 (docs/VERIFY.md, "A tie is not a win"). Used by the verdict and the selection policy.
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace nova {

struct RatioInterval {
  double ratio = 0;           // median(baseline) / median(candidate)
  double low = 0, high = 0;   // the 2.5% and 97.5% quantiles of the bootstrapped ratio
  int n_baseline = 0, n_candidate = 0;
  bool paired = false;        // resampled as side-by-side pairs
  int resamples = 0;

  bool above_one() const { return low > 1.0; }   // faster, beyond the noise
  bool below_one() const { return high < 1.0; }  // slower, beyond the noise
  bool operator==(const RatioInterval&) const = default;

  static constexpr int kResamples = 2000;
  static constexpr int kMinSamples = 5;  // fewer on either side bound nothing
  // nullopt when either side has fewer than kMinSamples samples or a non-positive median.
  static std::optional<RatioInterval> of(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                         int resamples = kResamples, std::uint64_t seed = 20261204);
};

void to_json(nlohmann::json& j, const RatioInterval& r);
void from_json(const nlohmann::json& j, RatioInterval& r);

}  // namespace nova
