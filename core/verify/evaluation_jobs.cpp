#include "core/verify/evaluation_jobs.h"

#include <chrono>

#include <fmt/format.h>

namespace nova {
namespace {
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

WorkerCall call_for(JobContext& ctx, std::string doing) {
  WorkerCall call;
  call.cancel = ctx.token();
  if (ctx.budget().count() > 0) call.budget = ctx.remaining();
  call.doing = std::move(doing);
  call.progress = [&ctx](const std::string& message, std::optional<double> fraction) {
    ctx.progress(message, fraction);
  };
  call.log = [&ctx](const std::string& line) { ctx.log(line); };
  return call;
}
}  // namespace

EvaluationJobs::EvaluationJobs(JobQueue& queue, CandidateEvaluator& evaluator, WorkerRunner& runner,
                               Options options)
    : queue_(queue), evaluator_(evaluator), runner_(runner), options_(options) {}

int EvaluationJobs::submit(const EvaluationRequest& request) {
  JobSpec spec;
  spec.key = "build:" + request.label;
  spec.supersedes = {key_for(request)};  // an older request's GPU job, queued or running
  spec.title = fmt::format("build {} ({} path)", request.label, request.candidate ? "fast" : "full");
  spec.lane = JobLane::Cpu;
  spec.budget = options_.build_budget;
  spec.work = [this, request](JobContext& ctx) { return build(request, ctx); };
  return queue_.submit(std::move(spec));
}

nlohmann::json EvaluationJobs::build(const EvaluationRequest& request, JobContext& ctx) {
  const auto started = std::chrono::steady_clock::now();
  StaticReport s = evaluator_.static_check(request);
  nlohmann::json out = {{"refusals", s.refusals}, {"library_calls", s.library_calls}};
  out["timings"] = {{"static_check_s", seconds_since(started)}};
  if (s.refused() && request.enforce_static) {
    // Nothing runs; the GPU job still records the refusal as a ValidationResult, without a GPU.
    ctx.log("refused: " + s.refusals.front());
  } else if (request.candidate) {
    ctx.progress("compiling with NVRTC", 0.2);
    const auto compile_started = std::chrono::steady_clock::now();
    NvrtcResult built = evaluator_.compile(request);
    out["timings"]["compile_s"] = seconds_since(compile_started);
    out["build"] = {{"ok", built.ok}, {"cache_hit", built.cache_hit}, {"compile_ms", built.compile_ms}};
    if (!built.log.empty()) ctx.log(built.log);
  } else {
    nlohmann::json args = {{"extension", std::filesystem::absolute(request.extension).string()},
                           {"build_dir", (evaluator_.work_dir() / "extensions").string()},
                           {"arch", request.arch}};
    const auto build_started = std::chrono::steady_clock::now();
    out["build"] = runner_.run("build_ext", args, call_for(ctx, "building " + request.label));
    out["timings"]["build_ext_s"] = seconds_since(build_started);
  }
  ctx.token().throw_if_cancelled();
  JobSpec gpu;
  gpu.key = key_for(request);
  gpu.title = fmt::format("validate{} {}", options_.bench_after_validation ? " + bench" : "", request.label);
  gpu.lane = s.refused() && request.enforce_static ? JobLane::Cpu : JobLane::Gpu;
  gpu.device = options_.device;
  gpu.budget = options_.gpu_budget;
  gpu.work = [this, request](JobContext& c) { return evaluate(request, c); };
  out["gpu_job"] = queue_.submit(std::move(gpu));
  return out;
}

nlohmann::json EvaluationJobs::evaluate(const EvaluationRequest& request, JobContext& ctx) {
  const auto started = std::chrono::steady_clock::now();
  WorkerCall call = call_for(ctx, "validating candidate " + request.label);
  nlohmann::json out;
  double evaluator_s = 0;
  if (options_.bench_after_validation) {
    Evaluation e = evaluator_.evaluate(request, std::move(call));
    evaluator_s = seconds_since(started);
    out["validation"] = e.validation;
    if (e.benchmark) out["benchmark"] = *e.benchmark;
    ctx.log(e.validation.verdict);
  } else {
    ValidationResult v = evaluator_.validate(request, std::move(call));
    evaluator_s = seconds_since(started);
    out["validation"] = v;
    ctx.log(v.verdict);
  }
  // The evaluator's call and this job's whole work (results to JSON too); the queue then writes the file.
  out["timings"] = {{"evaluator_s", evaluator_s}, {"work_s", seconds_since(started)}};
  return out;
}

}  // namespace nova
