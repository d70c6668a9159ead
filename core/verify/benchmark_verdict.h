#pragma once
// Whether a benchmarked candidate ships, by the product rule (issue #6): where it cannot beat
// eager for a group, measured, the generator says so and declines; it never ships a slower kernel.
// The rule lives here alone: a candidate ships only when it is not slower than PyTorch eager in
// both the cold GPU-time median (L2 flushed) and the wall-time-per-call median of one run.
// BenchmarkResult::recompute sets it; `nova bench`, the project store and the studio show it.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace nova {

struct BenchmarkResult;

enum class VerdictKind {
  ships,       // not slower than eager, cold and wall
  declined,    // measured slower than eager in either: eager is kept for the group
  unmeasured,  // the run lacks a cold or wall median of the candidate or of eager
};

std::string to_string(VerdictKind kind);
// Throws std::invalid_argument for an unknown word.
VerdictKind verdict_kind_from_string(const std::string& text);

struct BenchmarkVerdict {
  VerdictKind kind = VerdictKind::unmeasured;
  // eager median / candidate median; unset where that mode was not measured.
  std::optional<double> cold_vs_eager, wall_vs_eager;
  // "declined: slower than eager (cold 0.99x, wall 0.96x); eager is kept for this group"
  std::string sentence;
  bool ships() const { return kind == VerdictKind::ships; }
  bool operator==(const BenchmarkVerdict&) const = default;
};

// The verdict of `result` against eager, from its recomputed speedups.
BenchmarkVerdict judge_against_eager(const BenchmarkResult& result);

// {"kind": "declined", "cold_vs_eager": 0.99, "wall_vs_eager": 0.96, "sentence": ...}
void to_json(nlohmann::json& j, const BenchmarkVerdict& v);

}  // namespace nova
