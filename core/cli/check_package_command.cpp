// `nova check-package MODEL.py --package DIR [--project DIR] [--trials N] [--mode cold|wall|all]`: the
// whole model as the client will run it. Builds the package that `nova export` wrote (pip, into a
// private folder of the project; nothing installed into the user's environment), then on a GPU runs
// its ModelNew against the model file's Model: validation on fresh weights and inputs, then eager,
// torch.compile of Model, ModelNew and torch.compile of ModelNew timed interleaved in one process
// (cold and wall). `--build-only` builds the package into the project's cache and stops (no GPU needed;
// a later check finds the build by the package's content hash). Prints the ratios with their 95% intervals next to the Amdahl estimate the package
// was exported with, and what to review; the result is stored in the project. Exit codes: 0 passed,
// 1 the whole model failed validation, 2 bad input or a package that does not build, 3 no GPU.
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/job_progress_printer.h"
#include "core/cli/model_check_table.h"
#include "core/cli/session_cli.h"
#include "core/doctor/doctor_report.h"

namespace nova {
namespace {

struct CheckFlags {
  SessionCli session;
  std::string package, mode = "all", out, l2_flush = "clean";
  int trials = 3;
  bool match_eager = false, build_only = false;
  double budget_s = 900;
};

}  // namespace

void add_check_package_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "check-package",
      "build a package `nova export` wrote and check the whole model on a GPU: ModelNew against Model, validated, "
      "then timed against eager and torch.compile, and its GPU time profiled by fusion group before and after (stored in "
      "the project)");
  auto f = std::make_shared<CheckFlags>();
  f->session.add_options(*cmd, "the client's model file (the project's model)");
  cmd->add_option("--package", f->package, "the package folder `nova export --out` wrote")->required();
  cmd->add_option("--trials", f->trials, "validation trials, each with fresh weights and inputs")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--mode", f->mode, "timing: cold, wall or all")->capture_default_str();
  cmd->add_option("--l2-flush", f->l2_flush, "cold mode's L2 flush: clean or dirty")->capture_default_str();
  cmd->add_flag("--match-eager", f->match_eager,
                "pass only within tolerance of eager (default: also when closer to the float64 result than eager)");
  cmd->add_option("--budget", f->budget_s, "seconds the GPU part may take")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--out", f->out, "also write the result as JSON to this file");
  cmd->add_flag("--build-only", f->build_only,
                "build the package into the project's cache and stop (needs no GPU; a later check reuses the build "
                "while the package's files are unchanged)");
  cmd->callback([f] {
    PackageCheckOptions o;
    o.package_dir = f->package;
    o.trials = f->trials;
    o.match_eager = f->match_eager;
    o.l2_flush = f->l2_flush;
    o.gpu_budget = std::chrono::ceil<std::chrono::milliseconds>(std::chrono::duration<double>(f->budget_s));
    o.build_only = f->build_only;
    if (f->mode == "all") o.modes = {"cold", "wall"};
    else if (f->mode == "cold" || f->mode == "wall") o.modes = {f->mode};
    else throw CliError(fmt::format("--mode {}: expected cold, wall or all", f->mode), 2);
    if (f->l2_flush != "clean" && f->l2_flush != "dirty")
      throw CliError(fmt::format("--l2-flush {}: expected clean or dirty", f->l2_flush), 2);
    std::string name;
    try {
      name = ProjectSession::package_name_in(f->package);
    } catch (const std::invalid_argument& e) {
      throw CliError(e.what(), 2);
    }
    DoctorReport gpu;
    if (!f->build_only) probe_cuda_driver(gpu);
    if (!f->build_only && !gpu.has_gpu())
      throw CliError(fmt::format("no CUDA GPU here ({}): the whole-model check runs {} on a GPU, so run this on a "
                                 "machine with one",
                                 gpu.driver_error.empty() ? "the driver lists no device" : gpu.driver_error, name),
                     3);
    SessionOptions options;
    options.gpus = 1;
    options.cpu_threads = 1;
    auto session = f->session.open(options);
    session->set_listener(job_progress_printer());
    int job = 0;
    try {
      job = session->check_package(o);
    } catch (const std::invalid_argument& e) {
      throw CliError(e.what(), 2);
    }
    JobInfo info = session->wait(job);
    if (info.state != JobState::Succeeded) {
      const bool build = info.title.rfind("build ", 0) == 0;
      throw CliError(fmt::format("{} {}: {}", info.title, to_string(info.state), info.error), build ? 2 : 1);
    }
    if (f->build_only) {
      std::cout << fmt::format("{} built into {}; `nova check-package` without --build-only checks it on a GPU\n", name,
                               info.result.value("site", std::string()));
      return;
    }
    ModelCheckResult result = info.result.get<ModelCheckResult>();
    std::cout << ModelCheckTable::format(result);
    if (!f->out.empty()) {
      std::ofstream out(f->out);
      out << nlohmann::json(result).dump(2) << "\n";
      if (!out) throw CliError("cannot write " + f->out);
    }
    if (!result.passed) throw CliError("the whole model failed validation", 1);
  });
}

}  // namespace nova
