#pragma once
// The WorkerCall for work running inside a job: the job's cancel token, the budget it has left, its
// GPU lane's device, and the worker's progress and stderr lines relayed to the job. Shared by the
// evaluation jobs and the session's jobs.
#include <string>

#include "core/jobs/job_context.h"
#include "core/jobs/worker_runner.h"

namespace nova {

inline WorkerCall worker_call_for(JobContext& ctx, std::string doing) {
  WorkerCall call;
  call.device = ctx.device();
  call.cancel = ctx.token();
  if (ctx.budget().count() > 0) call.budget = ctx.remaining();
  call.doing = std::move(doing);
  call.progress = [&ctx](const std::string& message, std::optional<double> fraction) {
    ctx.progress(message, fraction);
  };
  call.log = [&ctx](const std::string& line) { ctx.log(line); };
  return call;
}

}  // namespace nova
