#pragma once
// The plain types of the selection policy (SelectionPolicy): what it reads of each fusion group and
// its versions (the evidence: validation and benchmark results, typed), and what it decides (which
// version ships for each group, the figures each group counts with, the whole model's figures).
// Grouped here because they are fields without behaviour; `nova optimize`, `nova status`, the studio,
// and later the export and the report read them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/verify/benchmark_result.h"
#include "core/verify/ratio_interval.h"
#include "core/verify/validation_result.h"

namespace nova {

// One version of a group's kernel and what is known about it.
struct VersionEvidence {
  std::int64_t version_id = 0;
  std::string rule;       // the builtin rule, "user edit", "llm: ..."
  bool primary = true;    // the generator's primary candidate (false: an alternative or an edit)
  std::optional<std::string> generator_declined;  // the generator wrote no kernel, and why
  std::optional<ValidationResult> validation;     // the latest
  std::optional<BenchmarkResult> benchmark;       // the latest
};

struct GroupEvidence {
  int group_id = 0;
  std::string kind;  // "gemm+epilogue", "elementwise", ...
  std::vector<VersionEvidence> versions;
  // The group's share of the model's GPU time from a profile, if one was attributed; else unset and
  // the policy weighs groups by their eager GPU time.
  std::optional<double> gpu_share;
};

// What became of a group.
enum class GroupOutcome {
  ships,         // a version passed validation and is faster than eager beyond the noise
  tie,           // the best measured version ties eager: eager is kept
  slower,        // every measured version is slower than eager: eager is kept
  failed,        // no version passed validation: eager is kept
  not_generated, // the generator declined the group: eager is kept
  unmeasured,    // versions passed but none was benchmarked against eager (cold and wall)
};
std::string to_string(GroupOutcome outcome);

using RatioKey = std::pair<std::string, std::string>;  // {mode: "cold"|"wall", baseline: "eager"|"compile"}

struct GroupSelection {
  int group_id = 0;
  std::string kind;
  GroupOutcome outcome = GroupOutcome::unmeasured;
  std::optional<std::int64_t> chosen;  // the version that ships; unset: eager is kept
  std::string reason;                  // one sentence
  // The speedup the group gives the product per {mode, baseline}: the chosen version's, or, where eager
  // is kept, 1.0 against eager and eager's own ratio to torch.compile measured in the same run.
  std::map<RatioKey, double> counted;
  std::optional<RatioInterval> cold_interval, wall_interval;  // the chosen version's, against eager
  std::optional<double> eager_cold_us;  // eager's cold median of the group (the weight without a profile)
  std::optional<double> gpu_share;      // the weight used in the Amdahl estimate (0..1)
  // The GPU its figures were measured on (the environment's "gpu"; empty where none says). Versions
  // benchmarked on another GPU are not compared with them (listed in `reason`).
  std::string gpu;
};

struct ModelFigures {
  int groups = 0, shipped = 0;
  int measured = 0;  // groups with a benchmark against eager; none: the means below say nothing
  std::map<RatioKey, double> geomean;       // over every group, eager kept counting 1.0
  std::map<std::string, double> slowest_vs_eager;  // per mode
  // The whole model's speedup over eager predicted by Amdahl's law from the groups' shares of GPU
  // time and their cold speedups; unset when no group has a weight.
  std::optional<double> amdahl_vs_eager;
  std::string shares_from;  // "profile" or "eager group times"
  double covered_share = 0; // the part of the model's GPU time the estimate covers (1 without a profile)
  // The GPUs the groups' figures come from, when more than one: the figures above then mix them.
  std::vector<std::string> mixed_gpus;
};

struct Selection {
  std::vector<GroupSelection> groups;
  ModelFigures model;
  const GroupSelection* group(int id) const {
    for (const auto& g : groups)
      if (g.group_id == id) return &g;
    return nullptr;
  }
};

void to_json(nlohmann::json& j, const GroupSelection& g);
void to_json(nlohmann::json& j, const ModelFigures& m);
void to_json(nlohmann::json& j, const Selection& s);
// Read back, as `nova optimize --out` wrote them (throws on a malformed file).
GroupOutcome outcome_from_string(const std::string& text);
void from_json(const nlohmann::json& j, GroupSelection& g);
void from_json(const nlohmann::json& j, ModelFigures& m);
void from_json(const nlohmann::json& j, Selection& s);

}  // namespace nova
