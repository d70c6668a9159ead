#include "core/verify/ratio_interval.h"

#include <algorithm>
#include <random>

#include "core/verify/sample_summary.h"  // quantile of the sorted ratios

namespace nova {
namespace {
// The median of `values` (reordered in place), as SampleSummary computes it (the mean of the two
// middle values for an even count), in linear time: the bootstrap takes thousands of them.
double median_of(std::vector<double>& values) {
  const std::size_t n = values.size(), mid = n / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (n % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}
}  // namespace

std::optional<RatioInterval> RatioInterval::of(const std::vector<double>& baseline,
                                               const std::vector<double>& candidate, int resamples,
                                               std::uint64_t seed) {
  if (baseline.size() < kMinSamples || candidate.size() < kMinSamples || resamples < 1) return std::nullopt;
  std::vector<double> b = baseline, c = candidate;
  const double mb = median_of(b), mc = median_of(c);
  if (mb <= 0 || mc <= 0) return std::nullopt;
  RatioInterval r;
  r.ratio = mb / mc;
  r.n_baseline = static_cast<int>(baseline.size());
  r.n_candidate = static_cast<int>(candidate.size());
  r.paired = baseline.size() == candidate.size();
  r.resamples = resamples;

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick_b(0, baseline.size() - 1), pick_c(0, candidate.size() - 1);
  std::vector<double> ratios;
  ratios.reserve(resamples);
  for (int k = 0; k < resamples; ++k) {
    for (std::size_t i = 0; i < b.size(); ++i) {
      std::size_t j = pick_b(rng);
      b[i] = baseline[j];
      if (r.paired) c[i] = candidate[j];
    }
    if (!r.paired)
      for (auto& v : c) v = candidate[pick_c(rng)];
    const double rb = median_of(b), rc = median_of(c);
    if (rc > 0) ratios.push_back(rb / rc);
  }
  if (ratios.empty()) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  r.low = SampleSummary::quantile(ratios, 0.025);
  r.high = SampleSummary::quantile(ratios, 0.975);
  return r;
}

void to_json(nlohmann::json& j, const RatioInterval& r) {
  j = {{"ratio", r.ratio},   {"low", r.low},         {"high", r.high},           {"n_baseline", r.n_baseline},
       {"n_candidate", r.n_candidate}, {"paired", r.paired}, {"resamples", r.resamples}};
}

void from_json(const nlohmann::json& j, RatioInterval& r) {
  r.ratio = j.value("ratio", 0.0);
  r.low = j.value("low", 0.0);
  r.high = j.value("high", 0.0);
  r.n_baseline = j.value("n_baseline", 0);
  r.n_candidate = j.value("n_candidate", 0);
  r.paired = j.value("paired", false);
  r.resamples = j.value("resamples", 0);
}

}  // namespace nova
