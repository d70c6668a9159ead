#include "core/cli/evaluation_cli.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/build/nvrtc_compiler.h"
#include "core/cli/cli_error.h"
#include "core/cli/job_progress_printer.h"
#include "core/cli/session_cli.h"
#include "core/session/project_evidence.h"
#include "core/doctor/doctor_report.h"
#include "core/env/input_file.h"
#include "core/gen/group_context.h"
#include "core/graph/model_graph.h"
#include "core/verify/static_checker.h"
#include "core/env/settings.h"
#include "core/worker/worker_client.h"
#include "core/worker/worker_error.h"

namespace nova {
namespace fs = std::filesystem;

namespace {

// The first line of an NVRTC log that reports an error (else its first line).
std::string first_error(const std::string& log) {
  std::istringstream lines(log);
  std::string first;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("error") != std::string::npos) return line;
    if (first.empty()) first = line;
  }
  return first;
}

// Seconds as given (0.5 stays 0.5 s), rounded up to whole milliseconds.
std::chrono::milliseconds budget(double seconds) {
  return std::chrono::ceil<std::chrono::milliseconds>(std::chrono::duration<double>(seconds));
}

// Exit 3: no GPU here for the `what` ("candidate", "version") to run on.
CliError no_gpu(const DoctorReport& report, const char* what) {
  return CliError(fmt::format("no CUDA GPU here ({}): validation and benchmarks run the {} on a GPU, so run "
                              "this on a machine with one.",
                              report.driver_error.empty() ? "the driver lists no device" : report.driver_error, what),
                  3);
}

// "float32[8,16], float32[16]": the dtypes and shapes of tensors (TensorInfo or PlanTensor).
template <typename Tensor>
std::string shapes_of(const std::vector<Tensor>& tensors) {
  std::string s;
  for (const auto& t : tensors) s += (s.empty() ? "" : ", ") + t.dtype + GroupContext::shape_text(t.shape);
  return s;
}

}  // namespace

void EvaluationCli::add_options(CLI::App& cmd) {
  cmd.add_option("model", model_,
                 "the model (.py), its captured graph (.json), or a fusion group's functional source (.py)")
      ->required();
  cmd.add_option("--group", group_, "the fusion group the candidate replaces");
  auto* candidate = cmd.add_option("--candidate", candidate_,
                                   "candidate JSON (fast path) or torch extension source .cu (full path)");
  cmd.add_option("--version", version_,
                 "instead of --candidate: a version stored in the model's project (`nova status` lists them); "
                 "evaluated through the project, and its result stored there")
      ->excludes(candidate);
  cmd.add_option("--project", project_,
                 "with --version: the project folder (default: the studio's project for the model)");
  cmd.add_option("--reference", reference_,
                 "a functional source to compare against instead of the model's group");
  cmd.add_option("--seed", seed_, "first seed of the random inputs (recorded in the result)");
  cmd.add_option("--timeout,--budget", timeout_s_, "seconds before the watchdog ends the worker (default 600)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--out", out_, "also write the result JSON to this file");
  cmd.add_flag("--json", json_, "print the result as JSON");
}

JobInfo EvaluationCli::run_stored(EvaluateOptions::Steps steps, const std::function<void(EvaluateOptions&)>& configure) {
  if (!reference_.empty() || group_)
    throw CliError("--version evaluates a stored version against its own group: --group and --reference do not apply", 2);
  SessionOptions options;
  options.gpus = 1;
  options.cpu_threads = 1;
  auto session = SessionCli::open(model_, project_, options);
  try {
    (void)session->store().version(*version_);
  } catch (const std::exception&) {
    throw CliError(fmt::format("no version {} in the project at {} (`nova status {}` lists its versions)",
                               *version_, session->project_dir().string(), model_),
                   2);
  }
  if (steps == EvaluateOptions::Steps::bench) {
    auto v = ProjectEvidence::latest_validation(session->store(), *version_);
    if (!v || !v->passed)
      throw CliError(fmt::format("version {} has {}: benchmark a version that passed (`nova validate {} --version {}`)",
                                 *version_, v ? "failed validation" : "not been validated", model_, *version_),
                     2);
  }
  DoctorReport report;
  probe_cuda_driver(report);
  if (!report.has_gpu()) throw no_gpu(report, "version");
  EvaluateOptions o;
  o.steps = steps;
  o.seed = seed_;
  o.gpu_budget = budget(timeout_s_);
  if (configure) configure(o);
  if (!json_) session->set_listener(job_progress_printer());
  int job = 0;
  try {
    job = session->evaluate(*version_, o);
  } catch (const std::invalid_argument& e) {
    throw CliError(e.what(), 2);
  }
  JobInfo info = session->wait(job);
  if (info.state != JobState::Succeeded)
    throw CliError(fmt::format("{} {}: {}", info.title, to_string(info.state), info.error), 1);
  return info;
}

EvaluationRequest EvaluationCli::request() {
  if (candidate_.empty()) throw CliError("give --candidate FILE or --version N", 2);
  EvaluationRequest r;
  r.seed = seed_;
  fs::path cand(candidate_), model(model_);
  try {
    InputFile::require_file(cand, "candidate");
    if (model.extension() == ".json")
      InputFile::require_file(model, "graph");
    else
      InputFile::require_python_model(model);
    if (!reference_.empty()) InputFile::require_python_model(reference_);
  } catch (const std::invalid_argument& e) {
    throw CliError(e.what(), 2);
  }
  r.label = cand.filename().string().substr(0, cand.filename().string().find('.'));
  const bool full = cand.extension() == ".cu";
  if (full) {
    r.extension = cand;
  } else {
    try {
      InputFile::read_json(cand, "candidate");  // a malformed file is named with the parser's reason
      r.candidate = CandidateEvaluator::load_candidate(cand);
    } catch (const std::invalid_argument& e) {
      throw CliError(e.what(), 2);
    } catch (const std::exception& e) {
      throw CliError(
          fmt::format("candidate {} is not a Nova candidate: {}", candidate_, InputFile::short_reason(e)), 2);
    }
    if (r.candidate->declined)
      throw CliError(fmt::format("candidate {} is a decline ({}): it has no kernel to run", candidate_,
                                 *r.candidate->declined),
                     2);
  }

  if (!reference_.empty()) {
    r.reference = reference_;
  } else if (model.extension() == ".json") {
    take_group_from_graph(r);
  } else if (full || !group_) {
    // Full path: the extension's forward takes the model's module_fn arguments; or the file is
    // itself a group's functional source.
    r.reference = model;
  } else {
    r.reference = model;
    r.group = group_;
  }
  check_group_id(r);  // (a graph's group is checked above, before its inputs are compared)

  DoctorReport report;
  probe_cuda_driver(report);
  if (report.has_gpu()) {
    r.arch = report.gpus.front().arch();
    return r;  // the evaluation runs the static checks and the build itself, and reports them
  }
  check_candidate(r);
  throw no_gpu(report, "candidate");
}

void EvaluationCli::take_group_from_graph(EvaluationRequest& r) {
  // A captured graph: the group's functional source, written to a private folder of this command.
  if (!group_) throw CliError("--group is required with a captured graph", 2);
  ModelGraph g;
  try {
    g = InputFile::read_json_as<ModelGraph>(model_, "graph", "a Nova model graph");
  } catch (const std::invalid_argument& e) {
    throw CliError(e.what(), 2);
  }
  const FusionGroup* grp = nullptr;
  for (const auto& candidate_group : g.groups)
    if (candidate_group.id == *group_) grp = &candidate_group;
  if (!grp)
    throw CliError(fmt::format("{} has no fusion group {} (it has {})", model_, *group_, g.groups.size()), 2);
  check_group_id(r);
  if (r.candidate) {
    std::vector<TensorInfo> inputs;
    try {
      inputs = GroupContext(g, *grp, {}).inputs;
    } catch (const std::exception& e) {
      throw CliError(fmt::format("{}: fusion group {} is inconsistent: {}", model_, *group_, e.what()), 2);
    }
    bool same = inputs.size() == r.candidate->plan.inputs.size();
    for (std::size_t i = 0; same && i < inputs.size(); ++i)
      same = inputs[i].shape == r.candidate->plan.inputs[i].shape;
    if (!same)
      throw CliError(
          fmt::format("candidate {} takes inputs {}, but fusion group {} of {} takes {}", candidate_,
                      shapes_of(r.candidate->plan.inputs), *group_, model_, shapes_of(inputs)),
          2);
  }
  reference_dir_.emplace("nova-group");
  r.reference = reference_dir_->write_file(fmt::format("group{}.py", *group_), grp->functional_source);
}

void EvaluationCli::check_group_id(const EvaluationRequest& r) const {
  if (group_ && r.candidate && r.candidate->group_id >= 0 && r.candidate->group_id != *group_)
    throw CliError(fmt::format("candidate {} was written for fusion group {}, not for --group {}", candidate_,
                               r.candidate->group_id, *group_),
                   2);
}

void EvaluationCli::check_candidate(const EvaluationRequest& r) const {
  StaticChecker checker;
  StaticReport s;
  if (r.candidate) {
    s = checker.check_candidate(*r.candidate);
  } else {
    std::ifstream in(r.extension);
    std::stringstream source;
    source << in.rdbuf();
    s = checker.check_extension(source.str());
  }
  if (s.refused())
    throw CliError(fmt::format("{} is refused: {}", candidate_, fmt::join(s.refusals, "; ")), 1);
  if (!r.candidate) {
    build_extension(r);
    return;
  }
  NvrtcResult built =
      NvrtcCompiler().compile(r.candidate->cuda_source, r.label + ".cu", r.arch, r.candidate->nvrtc_options);
  if (!built.ok)
    throw CliError(
        fmt::format("{} does not compile with NVRTC for {}: {}", candidate_, r.arch, first_error(built.log)),
        1);
}

// The full path without a GPU: the extension is built with nvcc and ninja in a worker (no GPU needed,
// into the worker's build cache that a later run on this machine loads), so a source that does not
// compile is said here and not only on the GPU machine.
void EvaluationCli::build_extension(const EvaluationRequest& r) const {
  std::ifstream in(r.extension);
  std::stringstream source;
  source << in.rdbuf();
  std::cerr << fmt::format("building {} with nvcc for {} (no GPU needed; a minute or more the first time)\n",
                           candidate_, r.arch);
  try {
    WorkerClient worker(Settings::load().resolved_python());
    worker.request("build_ext",
                   {{"extension_source", source.str()},
                    {"extension_name", std::filesystem::absolute(r.extension).string()},
                    {"arch", r.arch}},
                   budget(timeout_s_), console_progress());
  } catch (const WorkerError& e) {
    if (e.kind() == WorkerError::Kind::Timeout) throw CliError(e.what(), 1);
    throw CliError(fmt::format("{} does not build with nvcc for {}: {}", candidate_, r.arch, first_error(e.what())), 1);
  }
}

WorkerCall EvaluationCli::console_call(double timeout_s, bool quiet) {
  WorkerCall call;
  call.budget = budget(timeout_s);
  if (!quiet) call.progress = console_progress();
  return call;
}

EvaluationCli::Progress EvaluationCli::console_progress() {
  return [](const std::string& message, std::optional<double> fraction) {
    if (fraction)
      std::cerr << fmt::format("[{:3.0f}%] {}\n", *fraction * 100, message);
    else
      std::cerr << message << "\n";
  };
}

}  // namespace nova
