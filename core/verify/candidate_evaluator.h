#pragma once
// Takes one candidate through the verify stage: static checks on its source, the build (NVRTC to
// a cached cubin on the fast path; the full path's nvcc build happens in the worker), then the
// worker's validate or bench command through a WorkerRunner. A refused, uncompilable or crashing
// candidate yields a ValidationResult that says so in one sentence; nothing here throws for a bad
// candidate. Used by `nova validate`, `nova bench`, the studio's jobs and the GPU tests.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/build/nvrtc_compiler.h"
#include "core/gen/candidate.h"
#include "core/jobs/worker_runner.h"
#include "core/verify/benchmark_result.h"
#include "core/verify/static_checker.h"
#include "core/verify/validation_result.h"

namespace nova {

struct EvaluationRequest {
  std::string label = "candidate";
  // The reference: a fusion group's functional source (module_fn + get_inputs) or a model file in
  // functional form (Model, get_inputs, get_init_inputs, forward(..., fn=module_fn)).
  std::filesystem::path reference;
  // Set: `reference` is the client's model file and the worker captures it (intake) to take this
  // fusion group's functional source.
  std::optional<int> group;
  std::optional<Candidate> candidate;  // fast path
  std::filesystem::path extension;     // full path: a torch extension source (forward = module_fn)
  int trials = 5;
  bool strict = false;
  // The tolerance policy (docs/VERIFY.md): false, a candidate also passes when on every element its
  // error against float64 is no larger than eager's ("closer to exact than eager"); true, only within
  // tolerance of eager.
  bool match_eager = false;
  int seed = 1234;
  bool second_shape = true;
  std::vector<std::string> modes{"cold", "warm", "graph"};
  std::vector<std::string> baselines{"eager", "compile"};
  bool copy_reference = true;  // bench: time a copy of the group's bytes alongside (the memory floor)
  // bench, cold mode: "clean" (the flush's write is followed by a read, so no dirty line of it is
  // left for the call to write back) or "dirty" (the write alone). docs/VERIFY.md.
  std::string l2_flush = "clean";
  bool enforce_static = true;  // false only to exercise the runtime checks on a refused source
  std::string arch = "sm_90";
  // Set by the build job (EvaluationJobs) for the GPU job it queues: the static checks and the NVRTC
  // build are done once per evaluation, not again in the GPU job.
  std::optional<StaticReport> checked;
  std::optional<NvrtcResult> built;
};

// Validation and, when it passed, the benchmark, from one worker process.
struct Evaluation {
  ValidationResult validation;
  std::optional<BenchmarkResult> benchmark;
};

class CandidateEvaluator {
 public:
  CandidateEvaluator(WorkerRunner& runner, const NvrtcCompiler& compiler, std::filesystem::path work_dir);

  // A candidate JSON file; an empty cuda_source is read from NAME.cu beside NAME.plan.json.
  static Candidate load_candidate(const std::filesystem::path& path);

  StaticReport static_check(const EvaluationRequest& request) const;
  // The full path's extension source (throws std::runtime_error when it cannot be read).
  std::string read_extension(const EvaluationRequest& request) const;
  const std::filesystem::path& work_dir() const { return work_dir_; }
  // The fast path's NVRTC build (cached: validate and bench then hit the cache).
  NvrtcResult compile(const EvaluationRequest& request) const;
  ValidationResult validate(const EvaluationRequest& request, WorkerCall call);
  // Validates and, if the candidate passed, benchmarks it in the same worker (one start of
  // Python and CUDA instead of two: the submit-to-numbers turnaround).
  Evaluation evaluate(const EvaluationRequest& request, WorkerCall call);
  // Throws WorkerRunError or std::runtime_error (a build failure) when no numbers come back.
  BenchmarkResult bench(const EvaluationRequest& request, WorkerCall call);

 private:
  // `bench` non-null: the "evaluate" command, whose benchmark answer (or null) is stored there.
  ValidationResult run_validation(const EvaluationRequest& request, WorkerCall call, nlohmann::json* bench);
  // The worker's arguments for the candidate (writes the candidate JSON, compiles the cubin).
  // Returns nullopt with `why` set when the build fails.
  std::optional<nlohmann::json> prepare(const EvaluationRequest& request, double& build_s, std::string& why);

  WorkerRunner& runner_;
  const NvrtcCompiler& compiler_;
  std::filesystem::path work_dir_;
};

}  // namespace nova
