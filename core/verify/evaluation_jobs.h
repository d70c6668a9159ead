#pragma once
// Puts candidate evaluations on the JobQueue the way the studio needs them: a CPU-lane build job
// (static checks, then NVRTC for the fast path or nvcc + ninja in a worker for the full path)
// that, once built, submits the GPU-lane job (validate, then bench if it passed). Both carry the
// candidate's name, so a newer request for the same candidate supersedes an older one wherever it
// is (the build job's key is "build:<label>", the GPU job's "evaluate:<label>"). Results land in each job's
// JobInfo::result (and the queue's results folder).
#include <chrono>
#include <string>

#include "core/jobs/job_queue.h"
#include "core/verify/candidate_evaluator.h"

namespace nova {

class EvaluationJobs {
 public:
  struct Options {
    std::chrono::milliseconds build_budget{std::chrono::minutes(10)};
    std::chrono::milliseconds gpu_budget{std::chrono::minutes(5)};
    bool bench_after_validation = true;
    int device = 0;
  };

  EvaluationJobs(JobQueue& queue, CandidateEvaluator& evaluator, WorkerRunner& runner, Options options);

  // Submits the build job; returns its id. Its result names the GPU job it queued ("gpu_job").
  int submit(const EvaluationRequest& request);
  static std::string key_for(const EvaluationRequest& request) { return "evaluate:" + request.label; }

 private:
  nlohmann::json build(const EvaluationRequest& request, JobContext& ctx);
  nlohmann::json evaluate(const EvaluationRequest& request, JobContext& ctx);

  JobQueue& queue_;
  CandidateEvaluator& evaluator_;
  WorkerRunner& runner_;
  Options options_;
};

}  // namespace nova
