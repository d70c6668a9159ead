#pragma once
// The statistic every timing is reported with: median and interquartile range of the raw
// samples (quartiles by linear interpolation, numpy's default, so the worker's figures and ours
// agree), plus min, max, mean and the count. Used by BenchmarkResult and the results chart.
#include <vector>

#include <nlohmann/json.hpp>

namespace nova {

struct SampleSummary {
  int n = 0;
  double median = 0, q1 = 0, q3 = 0, iqr = 0, min = 0, max = 0, mean = 0;

  // Throws std::invalid_argument on NaN samples; an empty input gives n == 0.
  static SampleSummary of(std::vector<double> samples);
  // The p-quantile (0..1) of sorted samples, linear interpolation between closest ranks.
  static double quantile(const std::vector<double>& sorted, double p);
};

void to_json(nlohmann::json& j, const SampleSummary& s);

}  // namespace nova
