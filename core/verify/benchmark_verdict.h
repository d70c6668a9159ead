#pragma once
// Whether a benchmarked candidate ships, by the product rule: it never ships a kernel that is not
// shown to be faster than PyTorch eager. The rule lives here alone: a candidate ships only when, in
// both the cold GPU-time median (L2 flushed) and the wall-time-per-call median of one run, the 95%
// confidence interval of its speedup over eager (a bootstrap of the raw samples, RatioInterval)
// lies above 1.0. Where either interval lies below 1.0 it is slower: declined. Anything else is a
// tie, and a tie is not a win: eager is kept for the group and the sentence says so.
// BenchmarkResult::recompute sets it; `nova bench`, the project store, the selection policy and the
// studio show it.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/verify/ratio_interval.h"

namespace nova {

struct BenchmarkResult;

enum class VerdictKind {
  ships,       // faster than eager beyond the noise, cold and wall
  declined,    // slower than eager beyond the noise in either: eager is kept for the group
  unmeasured,  // the run lacks a cold or wall median of the candidate or of eager
  tie,         // neither shown faster nor shown slower: eager is kept for the group
};

std::string to_string(VerdictKind kind);
// Throws std::invalid_argument for an unknown word.
VerdictKind verdict_kind_from_string(const std::string& text);

struct BenchmarkVerdict {
  VerdictKind kind = VerdictKind::unmeasured;
  // eager median / candidate median; unset where that mode was not measured.
  std::optional<double> cold_vs_eager, wall_vs_eager;
  // Their 95% intervals; unset where the result carries no raw samples (then it cannot ship).
  std::optional<RatioInterval> cold_interval, wall_interval;
  // "declined: slower than eager (cold 0.99x, wall 0.96x); eager is kept for this group"
  std::string sentence;
  bool ships() const { return kind == VerdictKind::ships; }
  bool keeps_eager() const { return kind == VerdictKind::declined || kind == VerdictKind::tie; }
  bool operator==(const BenchmarkVerdict&) const = default;
};

// A ratio for people: two decimals, and one under 1 is cut, not rounded, so a slower result never
// reads "1.00x" ("0.99x").
std::string format_ratio(double value);

// The verdict of `result` against eager, from its recomputed speedups.
BenchmarkVerdict judge_against_eager(const BenchmarkResult& result);

// {"kind": "declined", "cold_vs_eager": 0.99, "wall_vs_eager": 0.96, "sentence": ...}
void to_json(nlohmann::json& j, const BenchmarkVerdict& v);

}  // namespace nova
