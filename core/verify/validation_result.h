#pragma once
// The outcome of validating one candidate: static checks on its source, then the worker's trials
// (fresh seeded inputs, errors against eager and float64, poisoning, run agreement, second shape).
// Everything a client needs to judge it, with the environment and the method, as JSON that
// round-trips (stored in the project, printed by `nova validate --json`, shown in the results
// panel's correctness table).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nova {

struct CheckResult {
  std::string name;  // "static: kernel launched", "trials", "second_shape", ...
  bool passed = false;
  std::string detail;
  bool operator==(const CheckResult&) const = default;
};

struct TrialSummary {
  int seed = 0;
  bool ok = false;
  std::optional<double> max_abs_vs_eager, max_rel_vs_eager, max_abs_vs_fp64, eager_max_abs_vs_fp64;
  bool runs_agree = true;
  std::vector<std::string> problems;
  bool operator==(const TrialSummary&) const = default;
};

struct ValidationResult {
  std::string candidate;            // label
  std::string path;                 // "fast" (NVRTC + harness) or "full" (torch extension)
  bool passed = false;              // every check passed and no refusal
  std::string verdict;              // one sentence: "passed 5 trials", "refused: ...", "worker crashed: ..."
  std::vector<CheckResult> checks;  // static checks first, then the worker's
  std::vector<TrialSummary> trials;
  std::vector<std::string>
      flags;  // reported but not failing: "specialised to shape [..]", "library-backed: ..."
  std::vector<std::string> warnings;  // "the reference is nearly constant ..."
  std::vector<std::string> library_ops;
  // Passed by the tolerance policy's second rule on some output: its error against float64 is no
  // larger than eager's on every element, though it differs from eager beyond the tolerance. Shown
  // as "closer to exact than eager" in every result and report.
  bool closer_to_exact = false;
  double build_s = 0;  // NVRTC compile or nvcc build
  double elapsed_s = 0;
  nlohmann::json environment = nlohmann::json::object();
  nlohmann::json method = nlohmann::json::object();
  nlohmann::json raw = nlohmann::json::object();  // the worker's full answer
  bool operator==(const ValidationResult&) const = default;

  // Fills trials, checks, flags and warnings from the worker's validate answer.
  void merge_worker_result(const nlohmann::json& worker);
  int trials_passed() const;
};

void to_json(nlohmann::json& j, const CheckResult& c);
void from_json(const nlohmann::json& j, CheckResult& c);
void to_json(nlohmann::json& j, const TrialSummary& t);
void from_json(const nlohmann::json& j, TrialSummary& t);
void to_json(nlohmann::json& j, const ValidationResult& r);
void from_json(const nlohmann::json& j, ValidationResult& r);

}  // namespace nova
