#pragma once
// The outcome of benchmarking one candidate against PyTorch eager and torch.compile in one
// process: raw samples per variant and mode (GPU time by CUDA events: cold, warm, graph; host
// wall time per call: wall), their median and IQR recomputed here from the samples, speedups as
// ratios of medians measured side by side, the verification pass, energy per call, flags for
// review, the verdict against eager (does it ship), the environment (GPU, driver, CUDA, torch,
// clocks seen) and the method. Beside the baselines, the worker times a reference that is not one:
// "copy", a device-to-device copy moving the group's compulsory bytes (inputs and parameters read
// once, outputs written once); no speedup is taken over it, and copy_shares say, per mode, how
// close the candidate comes to that memory floor measured alongside. The method says how the cold
// mode flushed the L2 (l2_flush(): "clean" or "dirty"). JSON round-trips.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/verify/benchmark_verdict.h"
#include "core/verify/sample_summary.h"

namespace nova {

struct Measurement {
  std::string variant;  // "candidate", "eager", "compile"; "copy" (the reference)
  std::string mode;     // "cold", "warm", "graph", "wall"
  std::string metric;   // "gpu_us" or "wall_us"
  std::vector<double> samples;
  SampleSummary summary;  // of samples
  bool operator==(const Measurement& o) const {
    return variant == o.variant && mode == o.mode && metric == o.metric && samples == o.samples;
  }
};

struct Speedup {
  std::string mode, baseline;
  double value = 0;  // baseline median / candidate median
  bool operator==(const Speedup&) const = default;
};

// The candidate against the copy reference in one mode: the copy moves `bytes` in copy_us (its
// median); share = copy_us / candidate_us, the fraction of the memory floor's speed the candidate
// reaches (about 1 for a kernel bound by memory traffic that moves nothing beyond its inputs and
// outputs; far below 1 for a compute-bound one).
struct CopyShare {
  std::string mode;
  double bytes = 0;
  double copy_us = 0, candidate_us = 0;
  double share() const { return candidate_us > 0 ? copy_us / candidate_us : 0; }
  double copy_tb_per_s() const { return copy_us > 0 ? bytes / (copy_us * 1e6) : 0; }
  bool operator==(const CopyShare&) const = default;
};

struct BenchmarkResult {
  std::string candidate;
  std::string path;
  std::vector<Measurement> measurements;
  std::vector<Speedup> speedups;
  std::vector<CopyShare> copy_shares;  // per mode, where the worker timed the copy reference
  std::vector<std::string> flags;      // "speedup 14.2x over eager (cold) is above 10x: review", hidden work
  BenchmarkVerdict verdict;            // judge_against_eager of the speedups
  nlohmann::json verification = nlohmann::json::array();
  nlohmann::json energy = nlohmann::json::object();
  nlohmann::json errors = nlohmann::json::object();  // variant -> why it has no numbers (compile failed...)
  nlohmann::json environment = nlohmann::json::object();
  nlohmann::json method = nlohmann::json::object();
  double elapsed_s = 0;
  bool operator==(const BenchmarkResult&) const = default;

  static constexpr double kReviewSpeedup = 10.0;
  static constexpr const char* kCopyReference = "copy";
  // A variant whose cold GPU time exceeds its wall time per call by more than this factor is flagged:
  // either the host could not keep the GPU fed inside the timed span (the flush ended before the
  // host had queued the call's kernels, so launch gaps count as GPU time), or the variant gains that
  // much from a warm L2. Either way its cold ratio is not one to quote alone.
  static constexpr double kReviewColdOverWall = 1.1;
  const Measurement* find(const std::string& variant, const std::string& mode) const;
  // Recomputes summaries from the samples, speedups from the medians, the review flags and the verdict.
  void recompute();
  std::vector<std::string> modes() const;  // in first-seen order
  // What the cold mode's L2 flush left in the L2: "clean" (the write was followed by a read of
  // another buffer, so the call inherited no dirty line to write back) or "dirty" (the write alone;
  // results from before the choice existed have no "l2_flush" in their method and were made so).
  std::string l2_flush() const;
  // One sentence on how the cold mode flushed the L2, for reports; empty without a cold mode.
  std::string cold_flush_sentence() const;
};

void to_json(nlohmann::json& j, const Measurement& m);
void from_json(const nlohmann::json& j, Measurement& m);
void to_json(nlohmann::json& j, const CopyShare& s);
void to_json(nlohmann::json& j, const Speedup& s);
void from_json(const nlohmann::json& j, Speedup& s);
void to_json(nlohmann::json& j, const BenchmarkResult& r);
// Reads a stored result or the worker's bench answer; summaries, speedups and verdict are recomputed.
void from_json(const nlohmann::json& j, BenchmarkResult& r);

}  // namespace nova
