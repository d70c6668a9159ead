#include "core/session/project_session.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/build/package_installer.h"
#include "core/jobs/job_worker_call.h"

#include "core/doctor/doctor_report.h"
#include "core/env/atomic_file.h"
#include "core/env/settings.h"
#include "core/gen/builtin_generator.h"
#include "core/session/generation_run.h"
#include "core/session/stored_generation.h"
#include "core/jobs/child_process_worker_runner.h"
#include "core/project/project_error.h"
#include "core/project/project_location.h"
#include "core/sandbox/sandbox_policy.h"
#include "core/select/selection_policy.h"
#include "core/session/project_evidence.h"
#include "core/trace/profile_runner.h"
#include "core/worker/isolated_call.h"

namespace nova {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

ProjectStore open_or_create(const fs::path& folder) {
  std::error_code ec;
  if (fs::exists(folder / ProjectStore::kFileName, ec)) return ProjectStore::open(folder);
  return ProjectStore::create(folder);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}


// The first GPU's architecture and multiprocessors, when this machine has one.
std::optional<GpuInfo> first_gpu() {
  DoctorReport report;
  probe_cuda_driver(report);
  if (!report.has_gpu()) return std::nullopt;
  return report.gpus.front();
}

}  // namespace

ProjectSession::ProjectSession(SessionOptions options, std::unique_ptr<WorkerRunner> runner)
    : options_(std::move(options)),
      project_dir_(options_.project.empty() ? project_folder_for(options_.model) : options_.project),
      store_(open_or_create(project_dir_)),
      runner_(std::move(runner)) {
  if (options_.python.empty()) options_.python = Settings::load().resolved_python();
  if (!runner_) {
    auto child = std::make_unique<ChildProcessWorkerRunner>(options_.python, project_dir_ / "work" / "worker");
    if (!options_.ray_address.empty()) child->set_ray(options_.ray_address, options_.ray_gpu_kind);
    // A model not captured yet starts with its intake, which waits for the first standby: that one
    // imports only what intake uses (on the H100 box the full preload took 13 s of a 13.7 s first intake).
    if (options_.keep_standby)
      child->keep_standby(true, std::max(1, options_.gpus), model_unchanged() ? std::string() : "intake");
    runner_ = std::move(child);
  }
  evaluator_ = std::make_unique<CandidateEvaluator>(*runner_, compiler_, project_dir_ / "work");
  JobQueue::Options q;
  q.gpu_devices = std::max(1, options_.gpus);
  // A Ray task holds a whole GPU: one evaluation per lane.
  q.shared_per_device = options_.ray_address.empty() ? std::max(1, options_.validations_per_device) : 1;
  q.cpu_threads = std::max(1, options_.cpu_threads);
  q.results_dir = project_dir_ / "jobs";
  queue_ = std::make_unique<JobQueue>(q);
  evaluations_ = std::make_unique<EvaluationJobs>(*queue_, *evaluator_, *runner_);
}

ProjectSession::~ProjectSession() { queue_.reset(); }  // jobs stop before what they use goes

void ProjectSession::write_project(const std::function<void(ProjectStore&)>& write) {
  std::lock_guard lock(write_mutex_);
  ProjectStore own = ProjectStore::open(project_dir_);
  write(own);
}

// --- intake -----------------------------------------------------------------------------------

int ProjectSession::intake(std::chrono::milliseconds budget) {
  JobSpec spec;
  spec.key = "intake";
  spec.title = fmt::format("intake {}", options_.model.filename().string());
  spec.lane = JobLane::Cpu;
  spec.budget = budget;
  spec.work = [this](JobContext& ctx) { return run_intake(ctx); };
  return queue_->submit(std::move(spec));
}

json ProjectSession::run_intake(JobContext& ctx) {
  std::error_code ec;
  if (fs::is_directory(options_.model, ec))
    throw std::invalid_argument(fmt::format("{} is a directory, not a model file", options_.model.string()));
  if (!fs::is_regular_file(options_.model, ec))
    throw std::invalid_argument(fmt::format("model file not found: {}", options_.model.string()));
  const auto started = std::chrono::steady_clock::now();
  const std::string source = read_text(options_.model);
  json args = {{"model", fs::absolute(options_.model).string()},
               {"check_groups", true},
               {"save_inputs", (fs::absolute(project_dir_) /
                                (options_.model.stem().string() + ".inputs.safetensors")).string()}};
  ctx.progress("capturing the graph in a worker", 0.0);
  WorkerCall call = worker_call_for(ctx, "capturing " + options_.model.filename().string());
  double worker_start = 0.0;  // the part of the intake spent waiting for the worker's Python and torch
  call.started = [&worker_start](double seconds) { worker_start = seconds; };
  json answer = runner_->run("intake", args, call);
  ModelGraph graph;
  try {
    graph = answer.get<ModelGraph>();
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("the worker's intake result is malformed: {}", e.what()));
  }
  graph.model_path = options_.model.string();
  ctx.token().throw_if_cancelled();
  write_project([&](ProjectStore& store) { store.set_model({options_.model.string(), source, json(graph).dump()}); });
  for (const auto& w : graph.warnings) ctx.log("warning: " + w);
  return {{"nodes", graph.nodes.size()},
          {"groups", graph.groups.size()},
          {"warnings", graph.warnings},
          {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()},
          {"worker_start_seconds", worker_start}};
}

std::string ProjectSession::worker_start_note(double worker_start_seconds) {
  if (worker_start_seconds < 0.5) return {};
  return fmt::format(" ({:.1f} s of it waiting for the worker to start: Python and torch)", worker_start_seconds);
}

void ProjectSession::import_graph(ModelGraph graph) {
  std::error_code ec;
  std::string source = fs::is_regular_file(options_.model, ec) ? read_text(options_.model) : std::string();
  if (graph.model_path.empty()) graph.model_path = options_.model.string();
  write_project([&](ProjectStore& store) { store.set_model({options_.model.string(), source, json(graph).dump()}); });
}

std::optional<ModelGraph> ProjectSession::graph() const {
  auto model = store_.model();
  if (!model || model->graph_json.empty()) return std::nullopt;
  auto j = json::parse(model->graph_json, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  try {
    return j.get<ModelGraph>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool ProjectSession::model_unchanged() const {
  auto model = store_.model();
  std::error_code ec;
  return model && !model->graph_json.empty() && fs::is_regular_file(options_.model, ec) &&
         model->source == read_text(options_.model);
}

// --- generation -------------------------------------------------------------------------------

int ProjectSession::generate(const GenerateOptions& options) {
  JobSpec spec;
  spec.key = "generate";
  spec.title = "builtin generator";
  spec.lane = JobLane::Cpu;
  spec.work = [this, options](JobContext& ctx) { return run_generate(options, ctx); };
  return queue_->submit(std::move(spec));
}

json ProjectSession::run_generate(const GenerateOptions& options, JobContext& ctx) {
  ProjectStore own = ProjectStore::open(project_dir_);
  auto model = own.model();
  if (!model || model->graph_json.empty())
    throw std::invalid_argument("the project has no graph yet: run intake first");
  ModelGraph graph = json::parse(model->graph_json).get<ModelGraph>();
  // Which groups: those asked for; of them, the ones not generated yet or by an older revision, and
  // those the project holds nothing for (storing cut short by a kill before generations were stored in
  // one transaction, or a damaged WAL), which are generated again and said.
  std::vector<StoredGroup> stored = stored_groups(own);
  const MissingGroups missing = missing_groups(stored, graph);
  const std::string lost = missing.lost();
  if (!lost.empty()) ctx.log(fmt::format("{}: generating them again", lost));
  std::vector<FusionGroup> todo;
  for (const auto& g : graph.groups) {
    if (!options.groups.empty() &&
        std::find(options.groups.begin(), options.groups.end(), g.id) == options.groups.end())
      continue;
    const StoredGroup* s = find_stored_group(stored, g);
    if (options.regenerate || !s || s->generator_revision < kBuiltinGeneratorRevision || missing.lacks(g.id))
      todo.push_back(g);
  }
  json out = {{"groups", todo.size()}, {"added", 0}, {"declined", 0}, {"failed_builds", 0},
              {"primary", json::array()}, {"missing", lost}};
  if (todo.empty()) {
    ctx.log("every group is generated by the current builtin generator revision: nothing to do");
    return out;
  }
  GenerationTarget target;
  target.gemm_tf32x3 = options.gemm_tf32x3;
  auto gpu = first_gpu();
  target.arch = !options.arch.empty() ? options.arch : gpu ? gpu->arch() : "sm_90";
  target.sm_count = options.sm_count > 0 ? options.sm_count : gpu ? gpu->sm_count : 132;
  std::vector<GeneratedGroup> generated;
  BuiltinGenerator gen(target);
  for (std::size_t i = 0; i < todo.size(); ++i) {
    ctx.token().throw_if_cancelled();
    const FusionGroup& g = todo[i];
    ctx.progress(fmt::format("group {} ({}): generating and compiling", g.id, g.kind),
                 static_cast<double>(i) / todo.size());
    GeneratedGroup r{g, {}, {}};
    std::vector<Candidate> alternatives;
    // In a child process: a crash of the generator on one group declines that group, with the signal
    // named, and neither the studio nor `nova` goes down with it.
    try {
      json j = IsolatedCall::run(
          [&] {
            return json{{"candidate", gen.generate(graph, g)},
                        {"alternatives", options.alternatives ? gen.alternatives(graph, g) : std::vector<Candidate>{}}};
          },
          fmt::format("the builtin generator on group {} ({})", g.id, g.kind));
      r.candidate = j.at("candidate").get<Candidate>();
      alternatives = j.at("alternatives").get<std::vector<Candidate>>();
    } catch (const IsolatedCallError& e) {
      r.candidate.group_id = g.id;
      r.candidate.model_path = graph.model_path;
      r.candidate.origin.kind = "builtin";
      r.candidate.origin.rule = "none";
      r.candidate.declined = e.what();
      r.candidate.summary = fmt::format("declined: {}", e.what());
    }
    r.intake_warnings = graph.warnings;  // they go with every version into the project
    if (!r.candidate.declined)
      r.build = compiler_.compile(r.candidate.cuda_source, fmt::format("group{}.cu", g.id), target.arch);
    for (auto& c : alternatives) {
      NvrtcResult built =
          compiler_.compile(c.cuda_source, fmt::format("group{}.{}.cu", g.id, c.origin.rule), target.arch);
      r.alternatives.push_back({std::move(c), std::move(built)});
    }
    if (r.candidate.declined) {
      out["declined"] = out["declined"].get<int>() + 1;
      ctx.log(fmt::format("group {}: declined: {}", g.id, *r.candidate.declined));
    } else if (!r.build.ok) {
      out["failed_builds"] = out["failed_builds"].get<int>() + 1;
      ctx.log(fmt::format("group {}: NVRTC failed:\n{}", g.id, r.build.log));
    }
    generated.push_back(std::move(r));
  }
  ctx.token().throw_if_cancelled();
  StoredGeneration stored_now;
  write_project([&](ProjectStore& store) { stored_now = store_generated(store, generated); });
  out["added"] = stored_now.added();
  out["primary"] = stored_now.primary;
  out["alternatives"] = stored_now.alternatives;
  out["arch"] = target.arch;
  return out;
}

// --- profiling --------------------------------------------------------------------------------

int ProjectSession::profile(int iters, int warmup, std::chrono::milliseconds budget) {
  JobSpec spec;
  spec.key = "profile";
  spec.title = fmt::format("profile {}", options_.model.filename().string());
  spec.lane = JobLane::Gpu;
  spec.budget = budget;
  spec.work = [this, iters, warmup](JobContext& ctx) { return run_profile(iters, warmup, ctx); };
  return queue_->submit(std::move(spec));
}

json ProjectSession::run_profile(int iters, int warmup, JobContext& ctx) {
  fs::create_directories(project_dir_ / "traces");
  ProfileOptions o;
  o.model = fs::absolute(options_.model).string();
  o.iters = iters;
  o.warmup = warmup;
  o.python = options_.python;
  o.trace_file = new_trace_path();
  if (ctx.budget().count() > 0) o.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.remaining());
  if (auto g = graph()) o.graph = *g;
  ctx.progress("profiling with the CUPTI tracer", 0.1);
  ProfileResult r = ProfileRunner(o).run();
  ctx.token().throw_if_cancelled();
  std::int64_t id = 0;
  write_project([&](ProjectStore& store) {
    TraceRecord t;
    t.kind = "cupti";
    t.path = r.trace_file.string();
    id = store.add_trace(t);
  });
  return {{"trace_file", r.trace_file.string()},
          {"trace_id", id},
          {"kernels", r.trace ? r.trace->kernel_count() : 0},
          {"attributed_fraction", r.attribution.attributed_fraction},
          {"event_ns", r.event_ns}};
}

fs::path ProjectSession::new_trace_path() const {
  return project_dir_ / "traces" /
         fmt::format("{}-{}.novatrace", options_.model.stem().string(),
                     std::chrono::system_clock::now().time_since_epoch().count());
}

std::int64_t ProjectSession::add_trace_file(const fs::path& file) {
  std::error_code ec;
  fs::create_directories(project_dir_ / "traces", ec);
  const fs::path kept = new_trace_path();
  fs::copy_file(file, kept, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot copy {} into {}: {}", file.string(), kept.string(), ec.message()));
  std::int64_t id = 0;
  write_project([&](ProjectStore& store) {
    TraceRecord t;
    t.kind = "cupti";
    t.path = kept.string();
    id = store.add_trace(t);
  });
  return id;
}

// --- whole-model checks of exported packages -------------------------------------------------

std::string ProjectSession::package_name_in(const fs::path& package_dir) {
  std::error_code ec;
  if (!fs::is_directory(package_dir, ec))
    throw std::invalid_argument(fmt::format("{} is not a folder: give the folder `nova export --out` wrote",
                                            package_dir.string()));
  for (const auto& e : fs::directory_iterator(package_dir, ec))
    if (e.is_directory() && fs::is_regular_file(e.path() / "package.json") && fs::is_regular_file(e.path() / "_ops.py"))
      return e.path().filename().string();
  throw std::invalid_argument(fmt::format("{} holds no package written by nova export (no <name>/package.json)",
                                          package_dir.string()));
}

int ProjectSession::check_package(const PackageCheckOptions& options) {
  const fs::path package = fs::absolute(options.package_dir).lexically_normal();
  const std::string name = package_name_in(package);
  std::error_code ec;
  if (!fs::is_regular_file(options_.model, ec))
    throw std::invalid_argument(fmt::format("model file not found: {}", options_.model.string()));
  JobSpec build;
  build.key = "check-package:" + package.string();
  build.title = fmt::format("build {}", name);
  build.lane = JobLane::Cpu;
  build.budget = options.build_budget;
  build.work = [this, package, name, options](JobContext& ctx) -> json {
    ctx.progress("building the package", 0.0);
    const fs::path site = PackageInstaller::install(
        package, project_dir_ / "packages", options_.python, [&](const std::string& m) { ctx.progress(m, 0.1); },
        [&] { return ctx.token().cancelled(); });
    ctx.token().throw_if_cancelled();
    if (options.build_only) return {{"site", site.string()}};
    JobSpec gpu;
    gpu.key = "check-package-gpu:" + package.string();
    gpu.title = fmt::format("check {} (whole model)", name);
    gpu.lane = JobLane::Gpu;
    gpu.budget = options.gpu_budget;
    gpu.work = [this, package, name, site, options](JobContext& c) -> json {
      json args = {{"package", name},
                   {"site_dir", site.string()},
                   {"model_source", read_text(options_.model)},
                   {"model_name", options_.model.filename().string()},
                   {"trials", options.trials},
                   {"seed", options.seed},
                   {"match_eager", options.match_eager},
                   {"modes", options.modes},
                   {"l2_flush", options.l2_flush}};
      json answer = runner_->run("model_check", args, worker_call_for(c, "checking the whole model with " + name));
      ModelCheckResult result;
      try {
        result = answer.get<ModelCheckResult>();
      } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("the worker's model_check result is malformed: {}", e.what()));
      }
      result.environment["lane_device"] = c.device();
      c.token().throw_if_cancelled();
      write_project([&](ProjectStore& store) {
        store.add_model_check({0, name, package.string(), result.passed, json(result).dump(), ""});
      });
      return json(result);
    };
    return {{"site", site.string()}, {"gpu_job", queue_->submit(std::move(gpu))}};
  };
  return queue_->submit(std::move(build));
}

std::vector<ModelCheckResult> ProjectSession::model_checks() const {
  std::vector<ModelCheckResult> out;
  for (const auto& record : store_.model_checks()) {
    auto j = json::parse(record.json, nullptr, false);
    if (j.is_discarded()) continue;
    try {
      out.push_back(j.get<ModelCheckResult>());
    } catch (const std::exception&) {
      continue;  // a record this version cannot read
    }
  }
  return out;
}

// --- evaluation -------------------------------------------------------------------------------

int ProjectSession::evaluate(std::int64_t version, const EvaluateOptions& options) {
  std::optional<StoredCandidate> stored = stored_candidate(store_, version);  // throws for an unknown id
  if (!stored) throw std::invalid_argument(fmt::format("v{} has no launch plan in the project", version));
  // The group's reference: its functional source, in the project's private work folder.
  fs::path work = project_dir_ / "work";
  fs::create_directories(work);
  // Replaced in one rename: another version of the group may be under evaluation, its worker
  // loading this file (a truncating rewrite once made it read a file without get_inputs()).
  fs::path reference = work / fmt::format("group{}.reference.py", stored->group.id);
  write_file_atomically(reference, stored->group.functional_source);
  EvaluationRequest request;
  request.label = fmt::format("v{}", version);
  request.reference = reference;
  if (stored->candidate.path == "full") {  // a torch extension, built with nvcc by the worker
    request.extension = work / fmt::format("v{}.ext.cu", version);
    write_file_atomically(request.extension, stored->candidate.extension_source);
  } else {
    request.candidate = stored->candidate;
  }
  request.trials = options.trials;
  request.seed = options.seed;
  request.second_shape = options.second_shape;
  request.match_eager = options.match_eager;
  request.modes = options.modes;
  request.baselines = options.baselines;
  request.copy_reference = options.copy_reference;
  request.l2_flush = options.l2_flush;
  request.arch = options.arch.empty() ? "sm_90" : options.arch;
  if (options.arch.empty())
    if (auto gpu = first_gpu()) request.arch = gpu->arch();

  EvaluationJobs::Options jobs;
  jobs.build_budget = options.build_budget;
  jobs.gpu_budget = options.gpu_budget;
  jobs.bench_after_validation = options.steps == EvaluateOptions::Steps::validate_and_bench;
  jobs.bench_only = options.steps == EvaluateOptions::Steps::bench;
  // LLM-written code runs in the sandbox, or unsandboxed with the project's consent (said in its
  // results), or not at all (SandboxRefused).
  std::optional<bool> sandboxed;
  if (store_.version(version).origin.kind == OriginKind::llm) {
    SandboxDecision decision = SandboxPolicy::decide(project_dir_, options_.bwrap);
    jobs.sandbox = decision.sandbox;
    sandboxed = decision.sandboxed();
  }
  jobs.store = [this, version, sandboxed](JobContext& ctx, const json& result) {
    store_evaluation(version, ctx, result, sandboxed);
  };
  return evaluations_->submit(request, jobs);
}

void ProjectSession::store_evaluation(std::int64_t version, JobContext& ctx, const json& result,
                                      std::optional<bool> sandboxed) {
  std::optional<ValidationResult> validation;
  std::optional<BenchmarkResult> benchmark;
  if (result.contains("validation")) validation = result["validation"].get<ValidationResult>();
  if (result.contains("benchmark")) benchmark = result["benchmark"].get<BenchmarkResult>();
  // Where it ran: the lane's device, beside what the worker said of the GPU.
  if (validation) validation->environment["lane_device"] = ctx.device();
  if (benchmark) benchmark->environment["lane_device"] = ctx.device();
  if (sandboxed) {  // LLM-written code: whether it ran in the sandbox
    if (validation) validation->environment["sandboxed"] = *sandboxed;
    if (benchmark) benchmark->environment["sandboxed"] = *sandboxed;
  }
  write_project([&](ProjectStore& store) {
    std::optional<double> speedup;
    if (benchmark) {
      speedup = benchmark->verdict.cold_vs_eager;
      store.add_result({0, version, "benchmark", json(*benchmark).dump(), ""}, std::nullopt, speedup,
                       benchmark->verdict);
    }
    if (validation)
      store.add_result({0, version, "validation", json(*validation).dump(), ""}, validation->passed, speedup);
  });
}

JobInfo ProjectSession::wait(int job) const {
  for (;;) {
    std::optional<JobInfo> info;
    while (!(info = queue_->wait(job, std::chrono::hours(1))) || !is_finished(info->state)) {
      if (!info) throw std::invalid_argument(fmt::format("no job {}", job));
    }
    if (info->state == JobState::Succeeded && info->result.is_object() && info->result.contains("gpu_job")) {
      job = info->result["gpu_job"].get<int>();
      continue;
    }
    return *info;
  }
}

Selection ProjectSession::selection() const {
  auto g = graph();
  if (!g) return {};
  return SelectionPolicy::select(ProjectEvidence::read(store_, *g));
}

}  // namespace nova
