// `nova optimize MODEL.py [MODEL.py ...] [--project DIR] [--gpus all|N] ...`: the whole workflow on every
// fusion group (core/session/optimization_run.h): intake, the builtin generator (primaries and
// alternatives), validation side by side, benchmarks one at a time alone on a GPU, the selection
// policy; progress on stderr, then the table of every version, what each group ships and the whole
// model's figures. With several models, each has its own project and the figures over all their
// groups close the output. --llm then runs the LLM search (core/llm/) on every group before the table.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/job_progress_printer.h"
#include "core/cli/llm_cli.h"
#include "core/cli/selection_table.h"
#include "core/cli/session_cli.h"
#include "core/doctor/doctor_report.h"
#include "core/env/settings.h"
#include "core/jobs/ray_cluster.h"
#include "core/sandbox/sandbox_refused.h"
#include "core/select/selection_policy.h"
#include "core/session/project_evidence.h"
#include "core/session/optimization_run.h"
#include "core/worker/no_gpu_error.h"

namespace nova {
namespace {

struct OptimizeFlags {
  std::vector<std::string> models;
  std::string project;
  std::string gpus = "1", graph, out, mode = "all", l2_flush = "clean";
  int trials = 5, validations = 4;
  double budget_s = 300;
  bool match_eager = false;
  bool fresh = false, remeasure = false, no_alternatives = false, gemm_tf32x3 = false, no_copy_reference = false;
  std::string ray, ray_gpu_kind;  // a Ray cluster for the GPU work
  bool llm = false;  // the LLM search on every group after the builtin generator's evaluation
  LlmCli llm_cli;
};

std::vector<std::string> modes_for(const std::string& mode) {
  if (mode == "all") return {"cold", "warm", "graph"};
  if (mode == "cold" || mode == "warm" || mode == "graph") return {mode};
  throw CliError(fmt::format("--mode {}: expected cold, warm, graph or all", mode), 2);
}

// --llm: the LLM search on every group of the model, after the builtin generator's versions were
// evaluated (their times are the bar); the budgets are shared by all groups (LlmCli). Without a GPU each
// group's search stores its first candidate and stops there. The selection is then read again, so the
// table counts the LLM's versions.
void run_llm(ProjectSession& session, LlmCli& llm, OptimizationReport& report) {
  auto graph = session.graph();
  if (!graph) return;
  for (const auto& group : graph->groups) {
    if (auto spent = llm.budget_spent()) {
      std::cerr << fmt::format("llm: no search for group {} and after: {}\n", group.id, *spent);
      break;
    }
    std::cerr << fmt::format("llm: group {} ({}): the {} search\n", group.id, group.kind, llm.provider().model);
    try {
      LlmSearchReport r = llm.run(session, group.id, false);
      LlmCli::print_report(r);
      if (r.state == "failed") report.failures.push_back(fmt::format("group {}: LLM search failed: {}", group.id, r.stop_reason));
      else if (auto why = LlmCli::unanswered(r)) report.failures.push_back(fmt::format("group {}: {}", group.id, *why));
    } catch (const NoGpuError& e) {
      std::cerr << fmt::format("llm: group {}: {}\n", group.id, e.what());
    } catch (const SandboxRefused& e) {
      throw CliError(e.what(), 1);
    } catch (const std::runtime_error& e) {
      std::cerr << fmt::format("llm: group {}: not searched: {}\n", group.id, e.what());
      report.failures.push_back(fmt::format("group {}: LLM search: {}", group.id, e.what()));
    }
  }
  report.evidence = ProjectEvidence::read(session.store(), *graph);
  report.selection = SelectionPolicy::select(report.evidence);
}

void run(OptimizeFlags& f) {
  if (f.l2_flush != "clean" && f.l2_flush != "dirty")
    throw CliError(fmt::format("--l2-flush {}: expected clean or dirty", f.l2_flush), 2);
  OptimizationOptions o;
  o.evaluate.modes = modes_for(f.mode);
  o.evaluate.trials = f.trials;
  o.evaluate.match_eager = f.match_eager;
  o.evaluate.l2_flush = f.l2_flush;
  o.evaluate.copy_reference = !f.no_copy_reference;
  o.evaluate.gpu_budget = std::chrono::ceil<std::chrono::milliseconds>(std::chrono::duration<double>(f.budget_s));
  o.generate.alternatives = !f.no_alternatives;
  o.generate.gemm_tf32x3 = f.gemm_tf32x3;
  o.fresh_intake = f.fresh;
  o.remeasure = f.remeasure;
  if (!f.graph.empty()) {
    std::ifstream in(f.graph);
    if (!in) throw CliError("cannot read " + f.graph, 2);
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) throw CliError(f.graph + " is not JSON", 2);
    try {
      o.graph = j.get<ModelGraph>();
    } catch (const std::exception& e) {
      throw CliError(fmt::format("{} is not a model graph: {}", f.graph, e.what()), 2);
    }
  }
  DoctorReport gpu;
  probe_cuda_driver(gpu);
  const int available = static_cast<int>(gpu.gpus.size());
  if (f.llm) f.llm_cli.resolve();
  SessionOptions s;
  std::optional<RayClusterInfo> cluster;
  if (!f.ray.empty()) {
    s.ray_address = f.ray;
    s.ray_gpu_kind = f.ray_gpu_kind;
    try {
      cluster = RayCluster::describe(Settings::load().resolved_python(), f.ray, f.ray_gpu_kind);
    } catch (const std::runtime_error& e) {
      throw CliError(fmt::format("--ray {}: {}", f.ray, e.what()), 2);
    }
    if (cluster->gpus < 1) throw CliError(fmt::format("--ray {}: the cluster has no GPU", f.ray), 2);
    std::cerr << fmt::format("ray: the cluster at {}: {}\n", f.ray, RayCluster::summary(*cluster));
    // The local NVRTC compiles for the cluster's GPU, as its probe task saw it.
    if (!cluster->arch.empty()) {
      o.generate.arch = o.evaluate.arch = cluster->arch;
      o.generate.sm_count = cluster->sm_count;
    }
  }
  const int lanes_available = cluster ? cluster->gpus : available;
  if (f.gpus == "all") {
    s.gpus = std::max(1, lanes_available);
  } else {
    try {
      s.gpus = std::stoi(f.gpus);
    } catch (const std::exception&) {
      throw CliError(fmt::format("--gpus {}: expected all or a number", f.gpus), 2);
    }
    if (s.gpus < 1) throw CliError("--gpus: at least 1", 2);
    if (lanes_available > 0 && s.gpus > lanes_available)
      throw CliError(fmt::format("--gpus {}: {} has {} GPU(s)", s.gpus,
                                 cluster ? "the Ray cluster at " + f.ray : std::string("this machine"),
                                 lanes_available),
                     2);
  }
  // Lanes on GPUs of different kinds would compare times across them: refused (a Ray run asks for one kind).
  if (!cluster && s.gpus > 1 && available >= s.gpus) {
    std::vector<std::string> kinds;
    for (int d = 0; d < s.gpus; ++d)
      if (std::find(kinds.begin(), kinds.end(), gpu.gpus[d].name) == kinds.end()) kinds.push_back(gpu.gpus[d].name);
    if (kinds.size() > 1)
      throw CliError(fmt::format("--gpus {}: this machine's first {} GPUs are of different kinds ({}); results are "
                                 "compared only on one kind: choose GPUs of one kind with CUDA_VISIBLE_DEVICES",
                                 f.gpus, s.gpus, fmt::join(kinds, ", ")),
                     2);
  }
  s.validations_per_device = std::max(1, f.validations);
  // Builds (NVRTC, nvcc) in a pool sized to this machine's cores.
  s.cpu_threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // With a cluster, its GPUs do the work: usable when its probe task saw a CUDA device.
  o.needs_gpu = cluster ? !cluster->arch.empty() : gpu.has_gpu();
  // Dozens of evaluations, each in a process of its own: one more is kept started ahead (torch
  // imported), so each job skips Python's and torch's start. Still one process per evaluation.
  s.keep_standby = o.needs_gpu;
  if (f.models.size() > 1 && !f.out.empty() && f.out.find("{}") == std::string::npos)
    throw CliError("--out with several models needs {} in the name (replaced by each model's name)", 2);
  std::vector<GroupSelection> all_groups;
  nlohmann::json failures = nlohmann::json::array();
  // With several models, --project names the folder that holds one project per model.
  auto project_of = [&](const std::string& model) {
    const std::string name = std::filesystem::path(model).stem().string();
    return f.project.empty() || f.models.size() == 1 ? f.project : (std::filesystem::path(f.project) / name).string();
  };
  // The next two models' sessions, opened while this one runs: their standby workers have Python and torch
  // imported by the time their intake starts (on the H100 box, intake took 8.5-11.2 s a model, about 8 s of
  // it the worker's start; with one model ahead, the model after one whose groups were all declined in
  // 1.4 s still waited 12.5 s). A model whose session cannot open ahead is opened again in its turn, which
  // says why. Index -> session (null: it could not open ahead).
  constexpr std::size_t kOpenAhead = 2;
  std::map<std::size_t, std::unique_ptr<ProjectSession>> ahead;
  auto stem = [](const std::string& m) { return std::filesystem::path(m).stem().string(); };
  for (std::size_t i = 0; i < f.models.size(); ++i) {
    const std::string& model = f.models[i];
    const std::string name = stem(model);
    auto opened = ahead.extract(i);
    auto session = opened && opened.mapped() ? std::move(opened.mapped()) : SessionCli::open(model, project_of(model), s);
    // (Not a model whose name is this one's or another open one's: their projects may be one folder.)
    for (std::size_t j = i + 1; s.keep_standby && j < f.models.size() && j <= i + kOpenAhead; ++j) {
      if (ahead.count(j)) continue;
      bool clash = stem(f.models[j]) == name;
      for (const auto& [k, open] : ahead) clash = clash || stem(f.models[k]) == stem(f.models[j]);
      if (clash) break;
      try {
        ahead[j] = SessionCli::open(f.models[j], project_of(f.models[j]), s);
      } catch (const std::exception&) {
        ahead[j] = nullptr;
      }
    }
    std::cerr << fmt::format("== {}: project {}\n", model, session->project_dir().string());
    session->set_listener(job_progress_printer());
    OptimizationRun run(*session, o, [](const std::string& line) { std::cerr << line << "\n"; });
    OptimizationReport report;
    try {
      report = run.run();
    } catch (const std::runtime_error& e) {
      if (f.models.size() == 1) throw CliError(e.what(), 1);
      std::cout << fmt::format("== {}: not optimized: {}\n\n", model, e.what());
      failures.push_back(fmt::format("{}: {}", model, e.what()));
      continue;
    }
    if (f.llm) {
      f.llm_cli.apply_consent(*session);
      run_llm(*session, f.llm_cli, report);
    }
    std::cout << fmt::format("== {}\n", model)
              << SelectionTable::format(std::filesystem::path(model).filename().string(), report.evidence,
                                        report.selection);
    std::cout << fmt::format("{} version(s) validated ({} passed), {} benchmarked, in {:.1f} s; fp32 with TF32 off "
                             "on both sides unless the model sets otherwise\n",
                             report.evaluated, report.passed, report.benchmarked, report.seconds);
    for (const auto& failure : report.failures) std::cout << "failed: " << failure << "\n";
    std::cout << "\n";
    all_groups.insert(all_groups.end(), report.selection.groups.begin(), report.selection.groups.end());
    if (!f.out.empty()) {
      std::string path = f.out;
      if (auto pos = path.find("{}"); pos != std::string::npos) path.replace(pos, 2, name);
      nlohmann::json j = {{"model", model},
                          {"project", session->project_dir().string()},
                          {"selection", report.selection},
                          {"failures", report.failures},
                          {"warnings", report.warnings},
                          {"seconds", report.seconds}};
      std::ofstream out(path);
      out << j.dump(2) << "\n";
      if (!out) throw CliError("cannot write " + path);
    }
  }
  if (f.models.size() > 1) {
    ModelFigures set = SelectionPolicy::set_figures(all_groups);
    std::string text = SelectionTable::format_model(set);
    text = text.substr(0, text.find("whole model vs eager"));
    std::cout << fmt::format("== all {} models, over their {} groups\n{}", f.models.size(), set.groups, text);
    if (!failures.empty()) throw CliError(fmt::format("{} model(s) not optimized", failures.size()), 1);
  }
  if (!o.needs_gpu && cluster)
    throw CliError(fmt::format("no usable GPU on the Ray cluster at {} ({}): the graphs and the generated kernels are "
                               "stored in the project; validation and benchmarks need a GPU that a task can use",
                               f.ray, cluster->probe_note.empty() ? "its probe task saw none" : cluster->probe_note),
                   3);
  if (!o.needs_gpu)
    throw CliError(
        fmt::format("no CUDA GPU here ({}): the graphs and the generated kernels are stored in the project; "
                    "validation and benchmarks need a GPU, so run this again on a machine with one",
                    gpu.driver_error.empty() ? "the driver lists no device" : gpu.driver_error),
        3);
}

}  // namespace

void add_optimize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "optimize",
      "the whole workflow on every fusion group: intake, builtin generator, validation side by side, "
      "benchmarks alone on a GPU, and which version each group ships");
  auto f = std::make_shared<OptimizeFlags>();
  cmd->add_option("model", f->models, "the model file(s) (KernelBench or functional form)")->required();
  cmd->add_option("--project", f->project,
                  "the project folder (default: the studio's project for the model, under "
                  "~/.local/share/nova/projects); with several models, the folder of their projects");
  cmd->add_option("--gpus", f->gpus,
                  "GPUs to use: all, or a number (default 1); one worker lane each (with --ray: the cluster's "
                  "GPUs, one Ray task at a time each)");
  cmd->add_option("--ray", f->ray,
                  "run validation and benchmarks on the Ray cluster at ADDRESS (host:port of its head), as tasks "
                  "of one GPU each (needs ray in the workers' Python); intake, generation and builds stay here, "
                  "LLM-written code runs here in its sandbox");
  cmd->add_option("--ray-gpu-kind", f->ray_gpu_kind,
                  "with --ray: the GPU kind to use (Ray's accelerator type, such as H100), required when the "
                  "cluster has several kinds");
  cmd->add_option("--graph", f->graph, "use this graph JSON (from `nova intake --json`) instead of intake");
  cmd->add_flag("--match-eager", f->match_eager,
                "pass a version only within tolerance of eager (default: also when it is closer to the "
                "float64 result than eager on every element; docs/VERIFY.md)");
  cmd->add_flag("--fresh", f->fresh, "capture the graph again even if the model file is unchanged");
  cmd->add_flag("--remeasure", f->remeasure, "evaluate versions that already have results again");
  cmd->add_option("--trials", f->trials, "validation trials, each with fresh inputs (default 5)");
  cmd->add_option("--validations", f->validations, "validations side by side on one GPU (default 4)");
  cmd->add_option("--mode", f->mode, "benchmark modes: cold, warm, graph or all (default all); wall always");
  cmd->add_option("--l2-flush", f->l2_flush, "cold mode's L2 flush: clean (default) or dirty (docs/VERIFY.md)");
  cmd->add_flag("--no-copy-reference", f->no_copy_reference,
                "do not time a copy of each group's bytes alongside (the memory floor)");
  cmd->add_option("--budget,--timeout", f->budget_s, "seconds each validation or benchmark may take (default 300)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-alternatives", f->no_alternatives, "generate only each group's primary candidate");
  cmd->add_flag("--gemm-tf32x3", f->gemm_tf32x3, "make the tensor-core GEMM (3xTF32) the primary of fp32 GEMMs (linear, mm, bmm, matmul) and 2-D and 3-D convolutions (transposed ones too)");
  cmd->add_option("--out", f->out,
                  "also write the selection as JSON to this file ({} in the name: the model's name)");
  auto* llm = cmd->add_flag("--llm", f->llm,
                            "after the builtin generator, the LLM search on every group (nova llm's options; "
                            "its budgets are shared by all groups)");
  f->llm_cli.add_options(*cmd, llm);
  cmd->callback([f] { run(*f); });
}

}  // namespace nova
