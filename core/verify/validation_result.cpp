#include "core/verify/validation_result.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace nova {
using nlohmann::json;

namespace {
// The worker writes "nan"/"inf" for non-finite errors (JSON has no NaN); those read as +inf here.
std::optional<double> error_value(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) return std::numeric_limits<double>::infinity();
  return std::nullopt;
}
std::optional<double> worst(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}
// The note for a candidate that failed only on tolerance against eager while it is, in every failing
// trial, at least as close to the float64 reference as eager: another summation order (a different
// GEMM kernel, say) rounds differently from eager's, and where sums cancel to near zero the
// difference exceeds the absolute tolerance. It still fails; the note tells the user why.
std::optional<std::string> rounding_note(const std::vector<TrialSummary>& trials) {
  double worst_candidate = 0, worst_eager = 0;
  bool any_failed = false;
  for (const auto& t : trials) {
    if (t.ok) continue;
    any_failed = true;
    if (!t.runs_agree || t.problems.empty() || !t.max_abs_vs_fp64 || !t.eager_max_abs_vs_fp64)
      return std::nullopt;
    for (const auto& p : t.problems)
      if (p.find("exceeds tolerance") == std::string::npos) return std::nullopt;
    if (!std::isfinite(*t.max_abs_vs_fp64) || *t.max_abs_vs_fp64 > *t.eager_max_abs_vs_fp64)
      return std::nullopt;
    worst_candidate = std::max(worst_candidate, *t.max_abs_vs_fp64);
    worst_eager = std::max(worst_eager, *t.eager_max_abs_vs_fp64);
  }
  if (!any_failed) return std::nullopt;
  return fmt::format(
      "every failing trial is at least as close to the float64 reference as eager (max abs error {:.3g} "
      "against eager's {:.3g}): the differences from eager look like rounding in another summation order, "
      "not a wrong result; the check against eager still fails it",
      worst_candidate, worst_eager);
}

json opt(const std::optional<double>& v) {
  if (!v) return nullptr;
  if (std::isinf(*v)) return "inf";
  return *v;
}
}  // namespace

void ValidationResult::merge_worker_result(const json& w) {
  raw = w;
  for (const auto& t : w.value("trials", json::array())) {
    TrialSummary s;
    s.seed = t.value("seed", 0);
    s.ok = t.value("ok", false);
    s.problems = t.value("problems", std::vector<std::string>{});
    for (const auto& o : t.value("outputs", json::array())) {
      s.max_abs_vs_eager = worst(s.max_abs_vs_eager, error_value(o["vs_eager"].value("max_abs", json())));
      s.max_rel_vs_eager = worst(s.max_rel_vs_eager, error_value(o["vs_eager"].value("max_rel", json())));
      if (o.contains("vs_fp64") && o["vs_fp64"].is_object())
        s.max_abs_vs_fp64 = worst(s.max_abs_vs_fp64, error_value(o["vs_fp64"].value("max_abs", json())));
      if (o.contains("eager_vs_fp64") && o["eager_vs_fp64"].is_object())
        s.eager_max_abs_vs_fp64 =
            worst(s.eager_max_abs_vs_fp64, error_value(o["eager_vs_fp64"].value("max_abs", json())));
      s.runs_agree = s.runs_agree && o.value("runs_agree", true);
    }
    trials.push_back(std::move(s));
  }
  for (const auto& c : w.value("checks", json::array())) checks.push_back(c.get<CheckResult>());
  for (const auto& f : w.value("flags", std::vector<std::string>{})) flags.push_back(f);
  closer_to_exact = w.value("closer_to_exact", false);
  for (const auto& f : w.value("warnings", std::vector<std::string>{})) warnings.push_back(f);
  if (auto note = rounding_note(trials)) warnings.push_back(*note);
  environment = w.value("environment", json::object());
  method = w.value("method", json::object());
  if (w.contains("load_s")) build_s += w["load_s"].get<double>();
}

int ValidationResult::trials_passed() const {
  return static_cast<int>(std::count_if(trials.begin(), trials.end(), [](const auto& t) { return t.ok; }));
}

void to_json(json& j, const CheckResult& c) {
  j = {{"name", c.name}, {"passed", c.passed}, {"detail", c.detail}};
}
void from_json(const json& j, CheckResult& c) {
  c.name = j.value("name", "");
  c.passed = j.value("passed", false);
  c.detail = j.value("detail", "");
}

void to_json(json& j, const TrialSummary& t) {
  j = {{"seed", t.seed},
       {"ok", t.ok},
       {"max_abs_vs_eager", opt(t.max_abs_vs_eager)},
       {"max_rel_vs_eager", opt(t.max_rel_vs_eager)},
       {"max_abs_vs_fp64", opt(t.max_abs_vs_fp64)},
       {"eager_max_abs_vs_fp64", opt(t.eager_max_abs_vs_fp64)},
       {"runs_agree", t.runs_agree},
       {"problems", t.problems}};
}
void from_json(const json& j, TrialSummary& t) {
  t.seed = j.value("seed", 0);
  t.ok = j.value("ok", false);
  t.max_abs_vs_eager = error_value(j.value("max_abs_vs_eager", json()));
  t.max_rel_vs_eager = error_value(j.value("max_rel_vs_eager", json()));
  t.max_abs_vs_fp64 = error_value(j.value("max_abs_vs_fp64", json()));
  t.eager_max_abs_vs_fp64 = error_value(j.value("eager_max_abs_vs_fp64", json()));
  t.runs_agree = j.value("runs_agree", true);
  t.problems = j.value("problems", std::vector<std::string>{});
}

void to_json(json& j, const ValidationResult& r) {
  j = {{"candidate", r.candidate},
       {"path", r.path},
       {"passed", r.passed},
       {"verdict", r.verdict},
       {"checks", r.checks},
       {"trials", r.trials},
       {"flags", r.flags},
       {"warnings", r.warnings},
       {"library_ops", r.library_ops},
       {"closer_to_exact", r.closer_to_exact},
       {"build_s", r.build_s},
       {"elapsed_s", r.elapsed_s},
       {"environment", r.environment},
       {"method", r.method},
       {"raw", r.raw}};
}
void from_json(const json& j, ValidationResult& r) {
  r.candidate = j.value("candidate", "");
  r.path = j.value("path", "");
  r.passed = j.value("passed", false);
  r.verdict = j.value("verdict", "");
  r.checks = j.value("checks", std::vector<CheckResult>{});
  r.trials = j.value("trials", std::vector<TrialSummary>{});
  r.flags = j.value("flags", std::vector<std::string>{});
  r.warnings = j.value("warnings", std::vector<std::string>{});
  r.library_ops = j.value("library_ops", std::vector<std::string>{});
  r.closer_to_exact = j.value("closer_to_exact", false);
  r.build_s = j.value("build_s", 0.0);
  r.elapsed_s = j.value("elapsed_s", 0.0);
  r.environment = j.value("environment", json::object());
  r.method = j.value("method", json::object());
  r.raw = j.value("raw", json::object());
}

}  // namespace nova
