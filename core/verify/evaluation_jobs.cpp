#include "core/verify/evaluation_jobs.h"

#include <chrono>

#include <fmt/format.h>

#include "core/jobs/job_worker_call.h"
#include "core/jobs/worker_run_error.h"

namespace nova {
namespace {
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

EvaluationJobs::EvaluationJobs(JobQueue& queue, CandidateEvaluator& evaluator, WorkerRunner& runner)
    : EvaluationJobs(queue, evaluator, runner, Options()) {}

EvaluationJobs::EvaluationJobs(JobQueue& queue, CandidateEvaluator& evaluator, WorkerRunner& runner,
                               Options options)
    : queue_(queue), evaluator_(evaluator), runner_(runner), options_(std::move(options)) {}

int EvaluationJobs::submit(const EvaluationRequest& request, const Options& options) {
  JobSpec spec;
  spec.key = "build:" + request.label;
  spec.supersedes = {key_for(request)};  // an older request's GPU job, queued or running
  spec.title = fmt::format("build {} ({} path)", request.label, request.candidate ? "fast" : "full");
  spec.lane = JobLane::Cpu;
  spec.budget = options.build_budget;
  spec.work = [this, request, options](JobContext& ctx) { return build(request, options, ctx); };
  return queue_.submit(std::move(spec));
}

nlohmann::json EvaluationJobs::build(const EvaluationRequest& submitted, const Options& options, JobContext& ctx) {
  const auto started = std::chrono::steady_clock::now();
  EvaluationRequest request = submitted;  // what the GPU job gets: with the checks and the build done here
  StaticReport s = evaluator_.static_check(request);
  request.checked = s;
  nlohmann::json out = {{"refusals", s.refusals}, {"library_calls", s.library_calls}};
  out["timings"] = {{"static_check_s", seconds_since(started)}};
  bool runnable = !(s.refused() && request.enforce_static);
  if (!runnable) {
    // Nothing runs; the GPU job still records the refusal as a ValidationResult, without a GPU.
    ctx.log("refused: " + s.refusals.front());
  } else if (request.candidate) {
    ctx.progress("compiling with NVRTC", 0.2);
    const auto compile_started = std::chrono::steady_clock::now();
    NvrtcResult built = evaluator_.compile(request);
    request.built = built;
    out["timings"]["compile_s"] = seconds_since(compile_started);
    out["build"] = {{"ok", built.ok}, {"cache_hit", built.cache_hit}, {"compile_ms", built.compile_ms}};
    if (!built.log.empty()) ctx.log(built.log);
    runnable = built.ok;  // the GPU job records the failed build without a GPU
  } else if (options.sandbox) {
    // A sandboxed worker writes only into its private folder, removed when it ends: a build here would be
    // lost, so the evaluation's own sandboxed worker builds the extension (ChildProcessWorkerRunner).
    out["build"] = {{"deferred", "built by the sandboxed worker that evaluates it"}};
  } else {
    nlohmann::json args = {{"extension_source", evaluator_.read_extension(request)},
                           {"extension_name", std::filesystem::absolute(request.extension).string()},
                           {"build_dir", (evaluator_.work_dir() / "extensions").string()},
                           {"arch", request.arch}};
    const auto build_started = std::chrono::steady_clock::now();
    WorkerCall call = worker_call_for(ctx, "building " + request.label);
    call.sandbox = options.sandbox;
    try {
      out["build"] = runner_.run("build_ext", args, call);
    } catch (const WorkerRunError& e) {
      // nvcc refused the source: the GPU job's worker meets the same error and records it as the failed
      // build check (CandidateEvaluator), on the CPU lane, as an NVRTC failure is recorded.
      if (std::string(e.what()).find("Error building extension") == std::string::npos) throw;
      ctx.log(e.what());
      out["build"] = {{"ok", false}, {"error", e.what()}};
      runnable = false;
    }
    out["timings"]["build_ext_s"] = seconds_since(build_started);
  }
  ctx.token().throw_if_cancelled();
  const Steps steps = options.steps();
  JobSpec gpu;
  gpu.key = key_for(request);
  gpu.title = fmt::format("{} {}", steps == Steps::validate ? "validate" : steps == Steps::bench ? "bench" : "validate + bench",
                          request.label);
  gpu.lane = !runnable ? JobLane::Cpu : steps == Steps::validate ? JobLane::GpuShared : JobLane::Gpu;
  gpu.device = options.device;
  gpu.budget = options.gpu_budget;
  gpu.work = [this, request, options](JobContext& c) { return evaluate(request, options, c); };
  out["gpu_job"] = queue_.submit(std::move(gpu));
  return out;
}

nlohmann::json EvaluationJobs::evaluate(const EvaluationRequest& request, const Options& options, JobContext& ctx) {
  const auto started = std::chrono::steady_clock::now();
  WorkerCall call = worker_call_for(ctx, "evaluating candidate " + request.label);
  call.sandbox = options.sandbox;
  nlohmann::json out;
  double evaluator_s = 0;
  switch (options.steps()) {
    case Steps::validate_and_bench: {
      Evaluation e = evaluator_.evaluate(request, std::move(call));
      out["validation"] = e.validation;
      if (e.benchmark) out["benchmark"] = *e.benchmark;
      ctx.log(e.validation.verdict);
      break;
    }
    case Steps::validate: {
      ValidationResult v = evaluator_.validate(request, std::move(call));
      out["validation"] = v;
      ctx.log(v.verdict);
      break;
    }
    case Steps::bench: {
      BenchmarkResult b = evaluator_.bench(request, std::move(call));  // throws when no numbers come back
      out["benchmark"] = b;
      ctx.log(b.verdict.sentence);
      break;
    }
  }
  evaluator_s = seconds_since(started);
  ctx.token().throw_if_cancelled();  // a cancelled or superseded job stores nothing
  out["device"] = ctx.device();
  if (options.store) options.store(ctx, out);
  // The evaluator's call and this job's whole work (results to JSON too); the queue then writes the file.
  out["timings"] = {{"evaluator_s", evaluator_s}, {"work_s", seconds_since(started)}};
  return out;
}

}  // namespace nova
