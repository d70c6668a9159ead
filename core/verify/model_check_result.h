#pragma once
// The whole model as the client will run it (`nova check-package`): an exported package's ModelNew
// against the client's Model. Validation (fresh weights and inputs per trial, the tolerance policy,
// inputs unchanged, the package's kernel and fallback call counts) and the benchmark's raw samples of
// four variants timed interleaved in one process (eager, torch.compile of Model, ModelNew,
// torch.compile of ModelNew; cold and wall). The ratios and their 95% intervals are recomputed here
// from the samples, and compared with the Amdahl estimate the package was exported with; a large
// gap, kernels that never ran, or torch.compile of ModelNew slower than ModelNew is flagged for review
// with the likely cause. JSON round-trips (the project stores it).
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/verify/benchmark_result.h"
#include "core/verify/ratio_interval.h"

namespace nova {

// One ratio of medians, baseline over subject, in one mode ("cold" or "wall").
struct ModelRatio {
  std::string mode;
  std::string subject;   // "optimized" or "optimized+compile"
  std::string baseline;  // "eager", "compile" or "optimized"
  double value = 0;
  std::optional<RatioInterval> interval;
  // "2.55x [2.54, 2.56]" (the interval where there is one).
  std::string text() const;
  bool operator==(const ModelRatio&) const = default;
};

struct OpCalls {
  long kernel = 0, fallback = 0;  // calls that ran the package's kernels / the original PyTorch ops
  bool operator==(const OpCalls&) const = default;
};

// One bar of the profiled GPU time split (ModelCheckResult::gpu_split), per call: each shipped group's
// time in the order of `shipped_groups`, then the rest of the call (the groups left to PyTorch and the
// nodes outside every group), so a bar before and one after hold the same parts.
struct SplitBar {
  double total_us = 0;
  std::vector<std::pair<int, double>> shipped;  // group id, us
  double rest_us = 0;
};

struct ModelCheckResult {
  std::string package, package_version;
  nlohmann::json manifest = nlohmann::json::object();  // the package's package.json
  bool passed = false;
  std::vector<std::string> failures, flags;
  nlohmann::json trials = nlohmann::json::array();  // per trial: seed, ok, problems, outputs
  std::map<std::string, OpCalls> calls;             // per op, during validation
  std::vector<Measurement> measurements;            // empty when validation failed
  nlohmann::json bench_errors = nlohmann::json::object();
  nlohmann::json bench_method = nlohmann::json::object();
  // Per variant: {"available": true, "mj_per_call", "calls", "seconds", "mean_power_w"} or
  // {"available": false, "reason"}; empty for a check recorded before the worker measured energy.
  nlohmann::json energy = nlohmann::json::object();
  nlohmann::json environment = nlohmann::json::object();
  // Where each call's GPU time goes by fusion group, before (Model) and after (ModelNew), from the
  // worker's profile (model_check.gpu_split): {"iters", "shipped_groups", "before", "before_plain",
  // "after", "method"}, each side {"total_us", "groups": {id: us}, "outside_us", ...}; {"error"} where
  // the profile failed; empty for a check recorded before the worker profiled.
  nlohmann::json gpu_split = nlohmann::json::object();
  double elapsed_s = 0;

  // Recomputed from the above by recompute():
  std::vector<ModelRatio> ratios;
  std::optional<double> amdahl_estimate;  // the manifest's, over eager (cold GPU time)
  std::vector<std::string> review;        // what to look at before quoting the figures

  // Above this relative gap between the measured cold ratio over eager and the Amdahl estimate, the
  // figures are flagged.
  static constexpr double kEstimateGap = 0.25;

  void recompute();
  const ModelRatio* ratio(const std::string& mode, const std::string& subject, const std::string& baseline) const;
  // Energy per call of a variant in mJ, when NVML measured it.
  std::optional<double> energy_mj(const std::string& variant) const;
  // Why a variant has no energy figure ("" when it has one).
  std::string energy_missing(const std::string& variant) const;
  // The profiled split's bar "before" or "after"; unset where split_missing() says why there is none.
  std::optional<SplitBar> split_bar(const std::string& side) const;
  // Why the check holds no split ("" when it holds one): recorded before the profile, or the profile failed.
  std::string split_missing() const;
  bool operator==(const ModelCheckResult&) const = default;
};

void to_json(nlohmann::json& j, const ModelCheckResult& r);
// Reads the worker's model_check answer as well as a stored result (recompute() is called).
void from_json(const nlohmann::json& j, ModelCheckResult& r);

}  // namespace nova
