#pragma once
// What the model is told about a candidate, digested rather than dumped: compile diagnostics
// (the first few, with their line numbers and the source line), the checks that refused it, per-trial
// correctness (max abs/rel error against eager, where it failed), its times against eager,
// torch.compile and the best so far, and a roofline sentence (its share of the copy bandwidth measured
// alongside; its FLOP rate). Also the hardware facts and the bar (the builtin candidate's times) that
// every prompt carries. Reads the version's stored results (LlmEvaluation::read).
#include <cstdint>
#include <optional>
#include <string>

#include "core/graph/model_graph.h"
#include "core/project/project_store.h"
#include "core/verify/benchmark_result.h"
#include "core/verify/validation_result.h"

namespace nova {

// A version's stored evaluation: its latest validation (which holds the build's outcome and log as its
// "build" check) and benchmark, where it has them.
struct LlmEvaluation {
  std::optional<ValidationResult> validation;
  std::optional<BenchmarkResult> benchmark;
  static LlmEvaluation read(const ProjectStore& store, int64_t version);
  // The candidate's cold median in µs, when benchmarked after passing validation.
  std::optional<double> cold_us() const;
  // The compiler's log when the build failed; nullopt when it did not fail (or did not run).
  std::optional<std::string> build_failure() const;
};

class LlmFeedback {
 public:
  static constexpr int kMaxDiagnostics = 8;
  static constexpr int kMaxTrials = 4;
  // The digest of `evaluation` for the candidate whose device code is `source`. `compiler_log`: NVRTC's
  // whole log when the build failed (the stored result keeps only its first error line).
  static std::string digest(const LlmEvaluation& evaluation, const std::string& source,
                            const FusionGroup& group, std::optional<double> best_cold_us,
                            const std::optional<std::string>& compiler_log = {});
  // The GPU, its SM count and the copy bandwidth measured beside a benchmark, from any benchmark of the
  // project's (the bar's); says what is not known.
  static std::string hardware(const std::optional<BenchmarkResult>& any);
  // The builtin candidate as the bar: its times against eager and torch.compile, or eager alone.
  static std::string bar(const std::optional<BenchmarkResult>& builtin);
  // "candidate 12.1 µs, eager 24.5 µs (2.03x), torch.compile 16.2 µs" for each mode measured.
  static std::string times(const BenchmarkResult& result);
};

}  // namespace nova
