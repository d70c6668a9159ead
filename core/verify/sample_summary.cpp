#include "core/verify/sample_summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace nova {

double SampleSummary::quantile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  double k = (sorted.size() - 1) * std::clamp(p, 0.0, 1.0);
  auto lo = static_cast<std::size_t>(std::floor(k));
  auto hi = static_cast<std::size_t>(std::ceil(k));
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (k - lo);
}

SampleSummary SampleSummary::of(std::vector<double> samples) {
  SampleSummary s;
  if (samples.empty()) return s;
  for (double v : samples)
    if (std::isnan(v)) throw std::invalid_argument("timing samples contain NaN");
  std::sort(samples.begin(), samples.end());
  s.n = static_cast<int>(samples.size());
  s.median = quantile(samples, 0.5);
  s.q1 = quantile(samples, 0.25);
  s.q3 = quantile(samples, 0.75);
  s.iqr = s.q3 - s.q1;
  s.min = samples.front();
  s.max = samples.back();
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
  return s;
}

void to_json(nlohmann::json& j, const SampleSummary& s) {
  j = {{"n", s.n},     {"median", s.median}, {"q1", s.q1},   {"q3", s.q3},
       {"iqr", s.iqr}, {"min", s.min},       {"max", s.max}, {"mean", s.mean}};
}

}  // namespace nova
