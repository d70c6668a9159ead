#include "core/cli/evaluation_cli.h"

#include <fstream>
#include <iostream>

#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_error.h"
#include "core/doctor/doctor_report.h"
#include "core/graph/model_graph.h"

namespace nova {
namespace fs = std::filesystem;

void EvaluationCli::add_options(CLI::App& cmd) {
  cmd.add_option("model", model_,
                 "the model (.py), its captured graph (.json), or a fusion group's functional source (.py)")
      ->required();
  cmd.add_option("--group", group_, "the fusion group the candidate replaces");
  cmd.add_option("--candidate", candidate_,
                 "candidate JSON (fast path) or torch extension source .cu (full path)")
      ->required();
  cmd.add_option("--reference", reference_,
                 "a functional source to compare against instead of the model's group");
  cmd.add_option("--seed", seed_, "first seed of the random inputs (recorded in the result)");
  cmd.add_option("--budget", budget_s_, "seconds before the watchdog ends the worker");
  cmd.add_option("--out", out_, "also write the result JSON to this file");
  cmd.add_flag("--json", json_, "print the result as JSON");
}

EvaluationRequest EvaluationCli::request() const {
  EvaluationRequest r;
  r.seed = seed_;
  fs::path cand(candidate_);
  if (!fs::exists(cand)) throw CliError("no such candidate: " + candidate_, 2);
  if (!fs::exists(model_)) throw CliError("no such model: " + model_, 2);
  r.label = cand.filename().string().substr(0, cand.filename().string().find('.'));
  bool full = cand.extension() == ".cu";
  if (full)
    r.extension = cand;
  else
    r.candidate = CandidateEvaluator::load_candidate(cand);

  fs::path model(model_);
  if (!reference_.empty()) {
    r.reference = reference_;
  } else if (model.extension() == ".json") {
    // A captured graph: the group's functional source, written beside the other work files.
    if (!group_) throw CliError("--group is required with a captured graph", 2);
    ModelGraph g = nlohmann::json::parse(std::ifstream(model)).get<ModelGraph>();
    const FusionGroup* grp = nullptr;
    for (const auto& candidate_group : g.groups)
      if (candidate_group.id == *group_) grp = &candidate_group;
    if (!grp) throw CliError(fmt::format("{} has no fusion group {}", model_, *group_), 2);
    auto path = fs::temp_directory_path() / fmt::format("nova-group-{}-{}.py", getpid(), *group_);
    std::ofstream(path) << grp->functional_source;
    r.reference = path;
  } else if (full || !group_) {
    // Full path: the extension's forward takes the model's module_fn arguments; or the file is
    // itself a group's functional source.
    r.reference = model;
  } else {
    r.reference = model;
    r.group = group_;
  }

  DoctorReport report;
  probe_cuda_driver(report);
  if (!report.has_gpu())
    throw CliError(
        fmt::format("no CUDA GPU here ({}): validation and benchmarks run the candidate on a GPU, so run "
                    "this on a machine with one.",
                    report.driver_error.empty() ? "the driver lists no device" : report.driver_error),
        3);
  r.arch = report.gpus.front().arch();
  return r;
}

WorkerCall EvaluationCli::console_call(int budget_s, bool quiet) {
  WorkerCall call;
  call.budget = std::chrono::seconds(budget_s);
  if (!quiet)
    call.progress = [](const std::string& message, std::optional<double> fraction) {
      if (fraction)
        std::cerr << fmt::format("[{:3.0f}%] {}\n", *fraction * 100, message);
      else
        std::cerr << message << "\n";
    };
  return call;
}

}  // namespace nova
