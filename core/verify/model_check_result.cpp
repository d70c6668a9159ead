#include "core/verify/model_check_result.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/verify/benchmark_verdict.h"

namespace nova {
namespace {
using nlohmann::json;

const Measurement* find(const std::vector<Measurement>& ms, const std::string& variant, const std::string& mode) {
  for (const auto& m : ms)
    if (m.variant == variant && m.mode == mode) return &m;
  return nullptr;
}
}  // namespace

std::string ModelRatio::text() const {
  // format_ratio, as every other figure: one under 1 is cut, so the same result reads the same in the
  // terminal, the studio and the report.
  if (!interval) return format_ratio(value);
  return fmt::format("{} [{}, {}]", format_ratio(value), format_ratio(interval->low), format_ratio(interval->high));
}

const ModelRatio* ModelCheckResult::ratio(const std::string& mode, const std::string& subject,
                                          const std::string& baseline) const {
  for (const auto& r : ratios)
    if (r.mode == mode && r.subject == subject && r.baseline == baseline) return &r;
  return nullptr;
}

void ModelCheckResult::recompute() {
  ratios.clear();
  review.clear();
  for (auto& m : measurements) m.summary = SampleSummary::of(m.samples);
  static const std::vector<std::pair<std::string, std::string>> kPairs = {
      {"optimized", "eager"}, {"optimized", "compile"}, {"optimized+compile", "compile"}, {"optimized+compile", "optimized"}};
  for (const std::string mode : {"cold", "wall"}) {
    for (const auto& [subject, baseline] : kPairs) {
      const Measurement* s = find(measurements, subject, mode);
      const Measurement* b = find(measurements, baseline, mode);
      if (!s || !b || s->summary.median <= 0) continue;
      ratios.push_back({mode, subject, baseline, b->summary.median / s->summary.median,
                        RatioInterval::of(b->samples, s->samples)});
    }
  }
  amdahl_estimate.reset();
  if (manifest.contains("figures") && manifest["figures"].contains("amdahl_vs_eager") &&
      manifest["figures"]["amdahl_vs_eager"].is_number())
    amdahl_estimate = manifest["figures"]["amdahl_vs_eager"].get<double>();

  long kernel_calls = 0, fallback_calls = 0;
  for (const auto& [op, c] : calls) {
    kernel_calls += c.kernel;
    fallback_calls += c.fallback;
    if (c.kernel == 0 && c.fallback > 0)
      review.push_back(fmt::format("{} never ran its kernels ({} calls took the original PyTorch ops: the shape "
                                   "guard refused the inputs)", op, c.fallback));
  }
  if (!calls.empty() && kernel_calls == 0)
    review.push_back("no call ran the package's kernels: the figures are the original model's");
  const ModelRatio* cold = ratio("cold", "optimized", "eager");
  if (cold && amdahl_estimate && *amdahl_estimate > 0) {
    const double gap = cold->value / *amdahl_estimate - 1.0;
    if (std::abs(gap) > kEstimateGap) {
      std::string cause =
          gap < 0 ? "likely causes: time outside the fusion groups (ops between groups, copies, the captured "
                    "graph's own overhead) or groups whose kernels fell back to PyTorch"
                  : "likely causes: the groups' shares of GPU time were estimated from eager group times, not a "
                    "profile of the whole model, or the model's eager time has launch gaps that the optimized "
                    "model closes";
      review.push_back(fmt::format("the whole model's cold speedup over eager, {:.2f}x, is {:.0f}% {} the Amdahl "
                                   "estimate of {:.2f}x from the groups; {}",
                                   cold->value, std::abs(gap) * 100, gap < 0 ? "below" : "above", *amdahl_estimate,
                                   cause));
    }
  }
  const ModelRatio* wall = ratio("wall", "optimized", "eager");
  if (cold && wall && cold->interval && wall->interval && cold->interval->above_one() && wall->interval->below_one())
    review.push_back(fmt::format("faster on the GPU (cold {}) but slower per call on the host (wall {}): at this size "
                                 "the model is bound by host time, and ModelNew's Python path (the signature lookup, the "
                                 "captured graph's generated code, each op's dispatch) costs more of it than eager's "
                                 "forward; a larger batch, or torch.compile / CUDA graphs around the whole model, "
                                 "moves the bound back to the GPU",
                                 cold->text(), wall->text()));
  for (const std::string mode : {"cold", "wall"})
    if (const ModelRatio* r = ratio(mode, "optimized+compile", "optimized"); r && r->interval && r->interval->below_one())
      review.push_back(fmt::format("torch.compile of ModelNew is slower than ModelNew alone ({}: {})", mode, r->text()));
}

void to_json(json& j, const ModelCheckResult& r) {
  json calls = json::object();
  for (const auto& [op, c] : r.calls) calls[op] = {{"kernel", c.kernel}, {"fallback", c.fallback}};
  json ratios = json::array();
  for (const auto& x : r.ratios)
    ratios.push_back({{"mode", x.mode}, {"subject", x.subject}, {"baseline", x.baseline}, {"value", x.value},
                      {"interval", x.interval ? json(*x.interval) : json(nullptr)}});
  json validation = {{"passed", r.passed}, {"failures", r.failures}, {"flags", r.flags}, {"trials", r.trials},
                     {"calls", calls}};
  json benchmark = nullptr;
  if (!r.measurements.empty() || !r.bench_errors.empty())
    benchmark = {{"measurements", r.measurements},
                 {"errors", r.bench_errors},
                 {"method", r.bench_method},
                 {"energy", r.energy}};
  j = {{"package", r.package},       {"package_version", r.package_version},
       {"manifest", r.manifest},     {"validation", validation},
       {"benchmark", benchmark},     {"environment", r.environment},
       {"elapsed_s", r.elapsed_s},   {"ratios", ratios},
       {"gpu_split", r.gpu_split},
       {"amdahl_estimate", r.amdahl_estimate ? json(*r.amdahl_estimate) : json(nullptr)},
       {"review", r.review}};
}

std::optional<double> ModelCheckResult::energy_mj(const std::string& variant) const {
  if (!energy.is_object() || !energy.contains(variant)) return std::nullopt;
  const json& e = energy[variant];
  if (!e.is_object() || !e.value("available", false) || !e.contains("mj_per_call") || !e["mj_per_call"].is_number())
    return std::nullopt;
  return e["mj_per_call"].get<double>();
}

std::string ModelCheckResult::energy_missing(const std::string& variant) const {
  if (energy_mj(variant)) return "";
  if (energy.empty()) return "this check was recorded before nova check-package measured energy";
  if (!energy.contains(variant)) return "no energy reading of " + variant;
  const json& e = energy[variant];
  const std::string reason = e.is_object() ? e.value("reason", std::string()) : std::string();
  return reason.empty() ? "no energy reading of " + variant : "NVML: " + reason;
}

std::string ModelCheckResult::split_missing() const {
  if (gpu_split.empty()) return "recorded before nova check-package profiled the split";
  if (gpu_split.contains("error")) return "the profile failed: " + gpu_split["error"].get<std::string>();
  for (const char* side : {"before", "after"})
    if (!gpu_split.contains(side) || !gpu_split[side].is_object()) return "holds no split before and after";
  return "";
}

std::optional<SplitBar> ModelCheckResult::split_bar(const std::string& side) const {
  if (!split_missing().empty() || !gpu_split.contains(side) || !gpu_split[side].is_object()) return std::nullopt;
  const json& s = gpu_split[side];
  const json groups = s.value("groups", json::object());
  SplitBar bar;
  bar.total_us = s.value("total_us", 0.0);
  double in_groups = 0;
  for (int g : gpu_split.value("shipped_groups", std::vector<int>{})) {
    bar.shipped.emplace_back(g, groups.value(std::to_string(g), 0.0));
    in_groups += bar.shipped.back().second;
  }
  bar.rest_us = std::max(0.0, bar.total_us - in_groups);
  return bar;
}

void from_json(const json& j, ModelCheckResult& r) {
  r = {};
  r.package = j.at("package").get<std::string>();
  r.package_version = j.value("package_version", "");
  r.manifest = j.value("manifest", json::object());
  const json& v = j.at("validation");
  r.passed = v.at("passed").get<bool>();
  r.failures = v.value("failures", std::vector<std::string>{});
  r.flags = v.value("flags", std::vector<std::string>{});
  r.trials = v.value("trials", json::array());
  if (v.contains("calls") && v["calls"].is_object())
    for (const auto& [op, c] : v["calls"].items()) r.calls[op] = {c.value("kernel", 0L), c.value("fallback", 0L)};
  if (j.contains("benchmark") && j["benchmark"].is_object()) {
    const json& b = j["benchmark"];
    r.measurements = b.value("measurements", std::vector<Measurement>{});
    r.bench_errors = b.value("errors", json::object());
    r.bench_method = b.value("method", json::object());
    if (b.contains("energy") && b["energy"].is_object()) r.energy = b["energy"];
  }
  r.environment = j.value("environment", json::object());
  if (j.contains("gpu_split") && j["gpu_split"].is_object()) r.gpu_split = j["gpu_split"];
  r.elapsed_s = j.value("elapsed_s", 0.0);
  r.recompute();
}

}  // namespace nova
