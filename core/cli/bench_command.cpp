// `nova bench MODEL --group N --candidate CAND [--mode cold|warm|graph|all] [--json]`: the
// candidate against PyTorch eager and torch.compile, interleaved in one worker process; medians
// with IQR, raw samples, speedups, the memory floor (a copy of the same bytes, timed alongside),
// energy, environment and method, and the verdict: the candidate
// ships or is declined (slower than eager, cold or wall). A decline is a result, not an error:
// the exit status is 0 as for a candidate that ships. With --version N instead of --candidate: a
// version stored in the project (it must have passed validation), through the project session, its
// result stored there. Exit 2 bad input, 3 without a GPU.
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/evaluation_cli.h"
#include "core/jobs/child_process_worker_runner.h"
#include "core/jobs/worker_run_error.h"

namespace nova {

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "time a candidate against PyTorch eager and torch.compile");
  struct Opts {
    EvaluationCli common;
    std::string mode = "all";
    std::vector<std::string> baselines{"eager", "compile"};
    bool no_copy_reference = false;
    std::string l2_flush = "clean";
  };
  auto opts = std::make_shared<Opts>();
  opts->common.add_options(*cmd);
  cmd->add_option("--mode", opts->mode, "cold (L2 flushed), warm, graph (CUDA-graph replay) or all")
      ->check(CLI::IsMember({"cold", "warm", "graph", "all"}));
  cmd->add_option("--baselines", opts->baselines, "eager and/or compile")->delimiter(',');
  cmd->add_flag("--no-copy-reference", opts->no_copy_reference,
                "do not time a copy of the group's bytes alongside (the memory floor)");
  cmd->add_option("--l2-flush", opts->l2_flush,
                  "cold mode: clean (256 MB written, then 2x L2 read, so the call inherits no dirty "
                  "line to write back) or dirty (the write alone)")
      ->check(CLI::IsMember({"clean", "dirty"}));
  cmd->callback([opts] {
    for (const auto& baseline : opts->baselines)
      if (baseline != "eager" && baseline != "compile")
        throw CliError(fmt::format("--baselines: '{}' is not a baseline (eager, compile)", baseline), 2);
    const std::vector<std::string> modes = opts->mode == "all" ? std::vector<std::string>{"cold", "warm", "graph"}
                                                               : std::vector<std::string>{opts->mode};
    BenchmarkResult b;
    if (opts->common.version()) {
      JobInfo info = opts->common.run_stored(EvaluateOptions::Steps::bench, [&](EvaluateOptions& o) {
        o.modes = modes;
        o.baselines = opts->baselines;
        o.copy_reference = !opts->no_copy_reference;
        o.l2_flush = opts->l2_flush;
      });
      b = info.result.at("benchmark").get<BenchmarkResult>();
    } else {
      EvaluationRequest r = opts->common.request();
      r.modes = modes;
      r.baselines = opts->baselines;
      r.copy_reference = !opts->no_copy_reference;
      r.l2_flush = opts->l2_flush;
      ChildProcessWorkerRunner runner;
      NvrtcCompiler compiler;
      CandidateEvaluator evaluator(runner, compiler, std::filesystem::temp_directory_path() / "nova-bench");
      try {
        b = evaluator.bench(r, EvaluationCli::console_call(opts->common.timeout_s(), opts->common.json()));
      } catch (const WorkerRunError& e) {
        throw CliError(e.what(), 1);
      }
    }
    nlohmann::json j = b;
    if (!opts->common.out().empty()) std::ofstream(opts->common.out()) << j.dump(2) << "\n";
    if (opts->common.json()) {
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::cout << fmt::format("{} ({} path) on {}\n", b.candidate, b.path, b.environment.value("gpu", "?"));
    for (const auto& m : b.measurements)
      std::cout << fmt::format("  {:<6} {:<9} median {:9.2f} us  IQR {:8.2f} us  (n={})\n", m.mode, m.variant,
                               m.summary.median, m.summary.iqr, m.summary.n);
    for (const auto& s : b.speedups)
      std::cout << fmt::format("  speedup over {} ({}): {:.2f}x\n", s.baseline, s.mode, s.value);
    for (const auto& c : b.copy_shares)
      std::cout << fmt::format(
          "  memory floor ({}): a copy of the same {:.1f} MB took {:.2f} us ({:.2f} TB/s); the candidate "
          "runs at {:.0f}% of its speed\n",
          c.mode, c.bytes / 1e6, c.copy_us, c.copy_tb_per_s(), 100 * c.share());
    if (auto flush = b.cold_flush_sentence(); !flush.empty()) std::cout << "  cold mode: " << flush << "\n";
    for (const auto& [variant, e] : b.energy.items())
      if (e.value("available", false))
        std::cout << fmt::format("  energy {}: {:.3f} mJ per call\n", variant, e.value("mj_per_call", 0.0));
    for (const auto& f : b.flags) std::cout << "  flag: " << f << "\n";
    std::cout << "  verdict: " << b.verdict.sentence << "\n";
    for (const auto& [variant, e] : b.errors.items())
      std::cout << "  note: " << variant << ": " << e.get<std::string>() << "\n";
  });
}

}  // namespace nova
