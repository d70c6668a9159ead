// `nova validate MODEL --group N --candidate CAND [--trials 5] [--strict] [--json]`: static checks,
// build, and the worker's trials against the group's PyTorch reference; or `nova validate MODEL
// --version N [--project DIR]`: a version stored in the project, through the project session, its
// result stored there. Exit 0 when it passes, 1 when it fails or is refused, 2 bad input, 3 without a GPU.
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/evaluation_cli.h"
#include "core/jobs/child_process_worker_runner.h"

namespace nova {

void add_validate_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("validate", "check a candidate against the PyTorch reference on fresh inputs");
  struct Opts {
    EvaluationCli common;
    int trials = 5;
    bool strict = false;
    bool match_eager = false;
    bool no_second_shape = false;
  };
  auto opts = std::make_shared<Opts>();
  opts->common.add_options(*cmd);
  cmd->add_option("--trials", opts->trials, "trials on fresh random inputs")->check(CLI::Range(1, 1000));
  cmd->add_flag("--strict", opts->strict, "fp32 tolerance 1e-5 instead of 1e-4");
  cmd->add_flag("--match-eager", opts->match_eager,
                "pass only within tolerance of eager (by default a result whose error against float64 is "
                "no larger than eager's on every element also passes: \"closer to exact than eager\")");
  cmd->add_flag("--no-second-shape", opts->no_second_shape, "skip the second batch size");
  cmd->callback([opts] {
    ValidationResult v;
    if (opts->common.version()) {
      if (opts->strict) throw CliError("--strict does not apply to --version (the project's tolerance policy)", 2);
      JobInfo info = opts->common.run_stored(EvaluateOptions::Steps::validate, [&](EvaluateOptions& o) {
        o.trials = opts->trials;
        o.match_eager = opts->match_eager;
        o.second_shape = !opts->no_second_shape;
      });
      v = info.result.at("validation").get<ValidationResult>();
    } else {
      EvaluationRequest r = opts->common.request();
      r.trials = opts->trials;
      r.strict = opts->strict;
      r.match_eager = opts->match_eager;
      r.second_shape = !opts->no_second_shape;
      ChildProcessWorkerRunner runner;
      NvrtcCompiler compiler;
      CandidateEvaluator evaluator(runner, compiler, std::filesystem::temp_directory_path() / "nova-validate");
      v = evaluator.validate(r, EvaluationCli::console_call(opts->common.timeout_s(), opts->common.json()));
    }
    nlohmann::json j = v;
    if (!opts->common.out().empty()) std::ofstream(opts->common.out()) << j.dump(2) << "\n";
    if (opts->common.json()) {
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << fmt::format("{} ({} path): {}\n", v.candidate, v.path, v.verdict);
      for (const auto& c : v.checks)
        std::cout << fmt::format("  [{}] {}: {}\n", c.passed ? "ok" : "FAIL", c.name, c.detail);
      for (const auto& t : v.trials)
        std::cout << fmt::format(
            "  trial seed {}: {} max abs err vs eager {:.3g}, vs fp64 {:.3g} (eager vs fp64 {:.3g})\n",
            t.seed, t.ok ? "ok  " : "FAIL", t.max_abs_vs_eager.value_or(-1), t.max_abs_vs_fp64.value_or(-1),
            t.eager_max_abs_vs_fp64.value_or(-1));
      for (const auto& f : v.flags) std::cout << "  flag: " << f << "\n";
      for (const auto& w : v.warnings) std::cout << "  warning: " << w << "\n";
    }
    if (!v.passed) throw CliError(v.candidate + " did not pass validation", 1);
  });
}

}  // namespace nova
