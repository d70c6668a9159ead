#pragma once
// One project's workflow, run as jobs: the engine that the studio and every `nova` command go
// through. A session owns the project store, the job queue (CPU lane for builds, one GPU lane per
// device), the worker runner and the NVRTC compiler, and runs intake, generation and evaluation
// (validate, benchmark) by version id as jobs with progress, cancel and a time budget. Core stores
// each result in the project when its job finishes (jobs write through a connection of their own),
// so no result passes through a front end before it is stored. The selection policy reads the
// project's evidence back (selection()).
//
// Thread use: the owner calls the session from one thread; jobs run on the queue's threads; the
// listener is called from those threads (the studio hands events to its UI thread).
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/build/nvrtc_compiler.h"
#include "core/graph/model_graph.h"
#include "core/jobs/job_queue.h"
#include "core/jobs/worker_runner.h"
#include "core/project/project_store.h"
#include "core/select/selection.h"
#include "core/session/session_options.h"
#include "core/verify/candidate_evaluator.h"
#include "core/verify/evaluation_jobs.h"
#include "core/verify/model_check_result.h"

namespace nova {

class ProjectSession {
 public:
  // `runner` null: a ChildProcessWorkerRunner with the options' interpreter (tests pass a fake one).
  // Opens the project (creating it on first use). Throws ProjectError when it cannot be opened.
  explicit ProjectSession(SessionOptions options, std::unique_ptr<WorkerRunner> runner = nullptr);
  ~ProjectSession();  // cancels unfinished jobs and waits for them
  ProjectSession(const ProjectSession&) = delete;
  ProjectSession& operator=(const ProjectSession&) = delete;

  const SessionOptions& options() const { return options_; }
  const std::filesystem::path& project_dir() const { return project_dir_; }
  // The owner's connection to the project (reads, user edits). Jobs use their own.
  ProjectStore& store() { return store_; }
  const ProjectStore& store() const { return store_; }
  JobQueue& jobs() { return *queue_; }
  WorkerRunner& runner() { return *runner_; }
  const NvrtcCompiler& compiler() const { return compiler_; }

  // Called on every change of a job (from the queue's threads).
  void set_listener(JobQueue::Listener listener) { queue_->set_listener(std::move(listener)); }

  // --- the workflow, as jobs; each returns the id of its job -------------------------------------
  // Captures the model's graph in a worker and stores it with the model's source. A newer intake
  // supersedes an older one (its worker is ended). Result: {"nodes", "groups", "warnings", "seconds",
  // "worker_start_seconds"} (the part of "seconds" spent waiting for the worker's Python and torch).
  int intake(std::chrono::milliseconds budget = std::chrono::minutes(10));
  // What follows an intake's time where its worker's start was worth naming (0.5 s or more):
  // " (W s of it waiting for the worker to start: Python and torch)"; empty otherwise.
  static std::string worker_start_note(double worker_start_seconds);
  // Stores a graph captured elsewhere (`nova intake --json` on another machine) as the model's graph,
  // with the model file's current text, instead of running intake here.
  void import_graph(ModelGraph graph);
  // The builtin generator over the stored graph's groups (those not generated yet, or written by an
  // older generator revision; all with options.regenerate), each candidate compiled with NVRTC, and
  // the versions stored in one go. Result: {"groups", "added", "declined", "failed_builds", "primary": [...]}.
  int generate(const GenerateOptions& options = {});
  // Evaluates a stored version: a CPU job (static checks, the NVRTC build, cached by content) that
  // then queues the GPU job (validate and/or bench on any free device; validation alone shares the
  // device with other validations, a benchmark runs alone on it), which stores its results. Returns the
  // build job's id; its result names the GPU job ("gpu_job"). Throws ProjectError for an unknown
  // version and std::invalid_argument for a version without a launch plan. A version written by an LLM
  // (origin llm) is evaluated in the sandbox (core/sandbox/), or unsandboxed where the sandbox cannot
  // start and the project allows it (its results say "sandboxed": false); else SandboxRefused is thrown.
  int evaluate(std::int64_t version, const EvaluateOptions& options = {});

  // Profiles the model on a GPU (the CUPTI tracer injected into a worker; alone on its device) and
  // stores the trace in the project (its file under traces/, a record naming it). Result:
  // {"trace_file", "trace_id", "kernels", "attributed_fraction", "event_ns"}.
  int profile(int iters = 20, int warmup = 5, std::chrono::milliseconds budget = std::chrono::minutes(10));

  // Checks an exported package as the client will run it: a CPU job builds it with pip into a
  // private folder of the project (cached by the package's content), then a GPU job (alone on its
  // device) runs ModelNew against the model file's Model in a worker, validation then benchmark
  // (model_check.py), and stores the ModelCheckResult. Returns the build job's id; its result names
  // the GPU job ("gpu_job"), whose result is the check. Throws std::invalid_argument for a folder that
  // is not an exported package.
  int check_package(const PackageCheckOptions& options);
  // The stored whole-model checks, oldest first (unreadable records are skipped).
  std::vector<ModelCheckResult> model_checks() const;
  // The Python package name inside an exported package folder (the folder holding package.json).
  static std::string package_name_in(const std::filesystem::path& package_dir);

  // Keeps a trace recorded elsewhere (`nova profile` run on its own): the file is copied under the
  // project's traces/ and recorded. Returns the trace's id. Throws std::runtime_error when the file
  // cannot be copied.
  std::int64_t add_trace_file(const std::filesystem::path& file);

  // Blocks until the job finished; follows a build job to the GPU job it queued. The final job's info.
  JobInfo wait(int job) const;

  // --- reading the project --------------------------------------------------------------------
  std::optional<ModelGraph> graph() const;  // the stored graph, if intake has run
  // Whether the stored model source is the model file's current text (intake need not run again).
  bool model_unchanged() const;
  // The selection policy over the project's current evidence (empty without a graph).
  Selection selection() const;

  // The key that a version's evaluation jobs carry (a newer request for it supersedes an older one).
  static std::string evaluation_key(std::int64_t version) { return "evaluate:v" + std::to_string(version); }

 private:
  // A fresh file name for a trace kept in the project: traces/<model>-<time>.novatrace.
  std::filesystem::path new_trace_path() const;
  // Runs `write` on a connection of the calling job's own, one writer at a time.
  void write_project(const std::function<void(ProjectStore&)>& write);
  nlohmann::json run_intake(JobContext& ctx);
  nlohmann::json run_profile(int iters, int warmup, JobContext& ctx);
  nlohmann::json run_generate(const GenerateOptions& options, JobContext& ctx);
  // `sandboxed` set: LLM-written code, which ran in the sandbox (true) or without it (false).
  void store_evaluation(std::int64_t version, JobContext& ctx, const nlohmann::json& result,
                        std::optional<bool> sandboxed);

  SessionOptions options_;
  std::filesystem::path project_dir_;
  ProjectStore store_;
  std::unique_ptr<WorkerRunner> runner_;
  NvrtcCompiler compiler_;
  std::unique_ptr<CandidateEvaluator> evaluator_;
  std::unique_ptr<EvaluationJobs> evaluations_;
  std::mutex write_mutex_;
  std::unique_ptr<JobQueue> queue_;  // last: its threads stop first
};

}  // namespace nova
