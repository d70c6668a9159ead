// `nova generate MODEL.py (--group N | --all) [--out DIR] [--graph GRAPH.json] [--arch sm_90]`:
// the builtin generator from the command line. Writes per group: the candidate (JSON), its device
// code (.cu, compiled here with NVRTC to prove it builds) and the torch-extension form (_ext.cu); the
// same three files for each alternative (BuiltinGenerator::alternatives) as groupN.RULE.*. Input is
// checked before any work: the model file, the graph JSON, and --arch against NVRTC's architectures;
// intake runs in a worker with --timeout and shows its progress on stderr. The graph and the versions
// are also stored in the project (the studio's for this model by default; --no-project: nothing).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/build/nvrtc_compiler.h"
#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/evaluation_cli.h"
#include "core/cli/session_cli.h"
#include "core/doctor/doctor_report.h"
#include "core/env/input_file.h"
#include "core/env/settings.h"
#include "core/gen/builtin_generator.h"
#include "core/graph/intake_runner.h"
#include "core/worker/worker_client.h"
#include "core/worker/worker_error.h"

namespace nova {
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
  if (!out.flush()) throw CliError("cannot write " + p.string());
}

// "sm_90" when NVRTC here compiles for it; otherwise exit 2 with the architectures it knows.
void check_arch(const std::string& arch) {
  const std::vector<int> known = nvrtc_supported_archs();
  std::string digits = arch.rfind("sm_", 0) == 0 ? arch.substr(3) : "";
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.pop_back();
  const bool numeric = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
  if (numeric && std::find(known.begin(), known.end(), std::stoi(digits)) != known.end()) return;
  std::vector<std::string> names;
  for (int a : known) names.push_back(fmt::format("sm_{}", a));
  throw CliError(fmt::format("--arch {}: NVRTC {} compiles for {}", arch, NvrtcCompiler::nvrtc_version(),
                             fmt::join(names, ", ")),
                 2);
}

ModelGraph load_graph(const std::string& model, const std::string& graph_json, const std::string& python,
                      double timeout_s) {
  if (!graph_json.empty()) {
    try {
      return InputFile::read_json_as<ModelGraph>(graph_json, "graph", "a Nova model graph");
    } catch (const std::invalid_argument& e) {
      throw CliError(e.what(), 2);
    }
  }
  try {
    InputFile::require_python_model(model);
  } catch (const std::invalid_argument& e) {
    throw CliError(e.what(), 2);
  }
  WorkerClient worker(python);
  IntakeRunner runner(worker);
  IntakeOptions options;
  // Whole seconds or finer, whatever the option holds, rounded up: 0.5 s must not become 0.
  options.timeout = std::chrono::ceil<decltype(options.timeout)>(std::chrono::duration<double>(timeout_s));
  try {
    return runner.run(model, options, EvaluationCli::console_progress());
  } catch (const WorkerError& e) {
    std::string msg = e.what();
    if (!e.traceback().empty()) msg += "\n" + e.traceback();
    throw CliError(msg, e.kind() == WorkerError::Kind::UserError ? 2 : 1);
  } catch (const std::invalid_argument& e) {
    throw CliError(e.what(), 2);
  }
}

// The graph (unless the project already holds this model's capture) and the generated versions, stored
// through the session: the same generator, so the project holds what was written to --out.
template <typename Opts>
void store_in_project(const Opts& o, const ModelGraph& graph, const std::string& python) {
  std::error_code ec;
  if (!fs::is_regular_file(o.model, ec)) {
    std::cerr << fmt::format("nova: nothing stored in a project: {} is not a model file here\n", o.model);
    return;
  }
  SessionOptions s;
  s.python = python;
  auto session = SessionCli::open(o.model, o.project, s);
  if (!o.graph.empty() || !session->model_unchanged()) session->import_graph(graph);
  GenerateOptions g;
  g.arch = o.arch;
  g.sm_count = o.sm_count;
  g.gemm_tf32x3 = o.gemm_tf32x3;
  g.alternatives = !o.no_alternatives;
  if (!o.all) g.groups = {o.group};
  JobInfo info = session->wait(session->generate(g));
  if (info.state != JobState::Succeeded)
    throw CliError(fmt::format("storing in project {}: {}", session->project_dir().string(), info.error), 1);
  if (std::string lost = info.result.value("missing", ""); !lost.empty())
    std::cout << fmt::format("project {}: {}: generated them again\n", session->project_dir().string(), lost);
  std::cout << fmt::format("project {}: {} version(s) added\n", session->project_dir().string(),
                           info.result.value("added", 0));
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "generate", "write fused CUDA candidates for a model's fusion groups (builtin generator)");
  struct Opts {
    std::string model, out = "nova-candidates", graph, arch = "sm_90", python, project;
    double timeout = 600;
    int group = -1;
    bool all = false;
    int sm_count = 132;
    bool gemm_tf32x3 = false, no_alternatives = false, no_project = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("model", o->model, "the model file (KernelBench or functional form)")->required();
  cmd->add_option("--group", o->group, "the fusion group to generate for");
  cmd->add_flag("--all", o->all, "every fusion group");
  cmd->add_option("--out", o->out, "output folder (default: nova-candidates)");
  cmd->add_option("--graph", o->graph,
                  "use this graph JSON (from `nova intake --json`) instead of running intake");
  cmd->add_option("--arch", o->arch, "GPU architecture to specialise and compile for (default sm_90)");
  cmd->add_option("--sm-count", o->sm_count, "multiprocessors of the target GPU (default 132, an H100/H200)");
  cmd->add_option("--python", o->python, "worker interpreter (default: from the settings)");
  cmd->add_option("--timeout", o->timeout, "seconds before the intake worker is stopped (default 600)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag(
      "--gemm-tf32x3", o->gemm_tf32x3,
      "make the tensor-core GEMM (3xTF32) the primary candidate of fp32 GEMMs (linear, mm, bmm, matmul) and 2-D and 3-D convolutions (transposed ones too) "
      "instead of an "
      "alternative (faster than cuBLAS fp32 and as close to float64 or closer, but it sums in another "
      "order than eager and can fail the 1e-4 check against eager; see docs/perf-notes.md)");
  cmd->add_flag("--no-alternatives", o->no_alternatives,
                "write only each group's primary candidate (by default, groups with another form worth "
                "measuring, such as fp32 linear layers and convolutions on tensor cores, or a reduction over one "
                "dimension split in eight slices or read four results a lane, get it too: groupN.RULE.*)");
  SessionCli::add_store_options(*cmd, o->project, o->no_project);
  cmd->callback([o] {
    if (o->group < 0 && !o->all) throw CliError("say which group: --group N, or --all", 2);
    check_arch(o->arch);
    const std::string python =
        o->python.empty() && o->graph.empty() ? Settings::load().resolved_python() : o->python;
    ModelGraph graph = load_graph(o->model, o->graph, python, o->timeout);
    // Intake's warnings (value-dependent control flow: a kernel for one branch only) reach the user.
    for (const auto& w : graph.warnings) std::cerr << "warning: " << w << "\n";
    std::vector<const FusionGroup*> groups;
    for (const auto& g : graph.groups)
      if (o->all || g.id == o->group) groups.push_back(&g);
    if (groups.empty())
      throw CliError(
          fmt::format("the model has no fusion group {} (it has {})", o->group, graph.groups.size()), 2);
    fs::create_directories(o->out);
    BuiltinGenerator gen({o->arch, o->sm_count, o->gemm_tf32x3});
    NvrtcCompiler nvrtc;
    int failures = 0;
    auto write = [&](const FusionGroup& g, const Candidate& c, const std::string& stem, double gen_ms) {
      write_text(fs::path(o->out) / (stem + ".candidate.json"), nlohmann::json(c).dump(2) + "\n");
      if (c.declined) {
        std::cout << fmt::format("group {} ({}): declined: {}\n", g.id, g.kind, *c.declined);
        return;
      }
      write_text(fs::path(o->out) / (stem + ".cu"), c.cuda_source);
      write_text(fs::path(o->out) / (stem + "_ext.cu"), c.extension_source);
      NvrtcResult r = nvrtc.compile(c.cuda_source, stem + ".cu", o->arch);
      std::cout << fmt::format(
          "{} ({}): rule {}, {} step(s){}; generated in {:.1f} ms; NVRTC {} for {} {}\n",
          stem == fmt::format("group{}", g.id) ? fmt::format("group {}", g.id)
                                               : fmt::format("group {} alternative", g.id),
          g.kind, c.origin.rule, c.plan.steps.size(),
          c.library_ops.empty() ? "" : ", library: " + fmt::format("{}", fmt::join(c.library_ops, ", ")),
          gen_ms, r.ok ? "ok" : "FAILED", o->arch,
          r.cache_hit ? "(cached)" : fmt::format("in {:.0f} ms", r.compile_ms));
      if (!r.ok) {
        ++failures;
        std::cout << r.log << "\n";
      }
    };
    for (const FusionGroup* g : groups) {
      auto t0 = std::chrono::steady_clock::now();
      Candidate c = gen.generate(graph, *g);
      std::vector<Candidate> alternatives;
      if (!o->no_alternatives) alternatives = gen.alternatives(graph, *g);
      double gen_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      write(*g, c, fmt::format("group{}", g->id), gen_ms);
      for (const auto& alt : alternatives)
        write(*g, alt, fmt::format("group{}.{}", g->id, alt.origin.rule), gen_ms);
    }
    std::cout << fmt::format("candidates written to {}\n", o->out);
    if (!o->no_project) store_in_project(*o, graph, python);
    if (failures) throw CliError(fmt::format("{} candidate(s) did not compile", failures), 1);
  });
}

}  // namespace nova
