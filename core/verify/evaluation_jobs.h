#pragma once
// Puts candidate evaluations on the JobQueue: the one evaluation path of the studio, `nova` and the
// GPU tests (ProjectSession::evaluate submits through it). A CPU-lane build job (static checks, then
// NVRTC for the fast path, cached by content, or nvcc + ninja in a worker for the full path) that, once
// built, submits the GPU job: validation alone shares its device with other validations (GpuShared),
// a benchmark runs alone on its device (Gpu); a refused or uncompilable candidate is recorded without a
// GPU. Both jobs carry the candidate's label, so a newer request for the same candidate supersedes an
// older one wherever it is (the build job's key is "build:<label>", the GPU job's "evaluate:<label>").
// Results land in each job's JobInfo::result (and the queue's results folder), and, before the GPU
// job finishes, in the `store` hook of its options (the session stores them in the project there).
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "core/jobs/job_queue.h"
#include "core/sandbox/sandbox_spec.h"
#include "core/verify/candidate_evaluator.h"

namespace nova {

class EvaluationJobs {
 public:
  enum class Steps { validate_and_bench, validate, bench };
  struct Options {
    std::chrono::milliseconds build_budget{std::chrono::minutes(10)};
    std::chrono::milliseconds gpu_budget{std::chrono::minutes(5)};
    bool bench_after_validation = true;  // validate_and_bench (true) or validate alone (false)
    int device = kAnyDevice;             // the GPU job's device, or any free one
    bool bench_only = false;             // the benchmark alone (a version that passed before)
    // Set: the code is LLM-written; its workers (extension build, validation, benchmark) run in this
    // sandbox.
    std::optional<SandboxSpec> sandbox;
    // Called on the GPU job's thread with its result ({"validation", "benchmark"}), unless cancelled;
    // an exception fails the job.
    std::function<void(JobContext& ctx, const nlohmann::json& result)> store;
    Steps steps() const {
      return bench_only ? Steps::bench : bench_after_validation ? Steps::validate_and_bench : Steps::validate;
    }
  };

  EvaluationJobs(JobQueue& queue, CandidateEvaluator& evaluator, WorkerRunner& runner);
  EvaluationJobs(JobQueue& queue, CandidateEvaluator& evaluator, WorkerRunner& runner, Options options);

  // Submits the build job with the default options; returns its id. Its result names the GPU job it
  // queued ("gpu_job").
  int submit(const EvaluationRequest& request) { return submit(request, options_); }
  int submit(const EvaluationRequest& request, const Options& options);
  static std::string key_for(const EvaluationRequest& request) { return "evaluate:" + request.label; }

 private:
  nlohmann::json build(const EvaluationRequest& request, const Options& options, JobContext& ctx);
  nlohmann::json evaluate(const EvaluationRequest& request, const Options& options, JobContext& ctx);

  JobQueue& queue_;
  CandidateEvaluator& evaluator_;
  WorkerRunner& runner_;
  Options options_;
};

}  // namespace nova
