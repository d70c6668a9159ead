#include "core/llm/llm_feedback.h"

#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "core/build/diagnostics.h"
#include "core/session/project_evidence.h"

namespace nova {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string compile_digest(const std::string& log, const std::string& source) {
  const auto diagnostics = parse_diagnostics(log);
  const auto code = lines_of(source);
  std::string out = "It did not compile (NVRTC).\n";
  int shown = 0;
  for (const auto& d : diagnostics) {
    if (d.severity == DiagnosticSeverity::note) continue;
    if (shown == LlmFeedback::kMaxDiagnostics) {
      out +=
          fmt::format("... and {} more diagnostics\n", diagnostics.size() - static_cast<std::size_t>(shown));
      break;
    }
    out += fmt::format("- line {}: {}: {}\n", d.line, to_string(d.severity), d.message);
    if (d.line >= 1 && static_cast<std::size_t>(d.line) <= code.size())
      out += fmt::format("    {:>4} | {}\n", d.line, code[static_cast<std::size_t>(d.line) - 1]);
    ++shown;
  }
  if (shown == 0) {  // no line-numbered diagnostic: the log's first lines
    auto raw = lines_of(log);
    for (std::size_t i = 0; i < raw.size() && i < 20; ++i) out += "    " + raw[i] + "\n";
  }
  return out;
}

std::string validation_digest(const ValidationResult& v) {
  std::string out;
  bool refused = false;
  for (const auto& c : v.checks)
    if (!c.passed && c.name.rfind("static", 0) == 0) refused = true;
  out += refused ? fmt::format("It was refused before running: {}\n", v.verdict)
                 : fmt::format("It is wrong: {}\n", v.verdict);
  for (const auto& c : v.checks)
    if (!c.passed) out += fmt::format("- check {} failed: {}\n", c.name, c.detail);
  int shown = 0;
  for (const auto& t : v.trials) {
    if (t.ok || shown == LlmFeedback::kMaxTrials) continue;
    std::string errors;
    if (t.max_abs_vs_eager) errors += fmt::format("max abs error {:.3g}", *t.max_abs_vs_eager);
    if (t.max_rel_vs_eager)
      errors += fmt::format("{}max rel error {:.3g}", errors.empty() ? "" : ", ", *t.max_rel_vs_eager);
    std::string problems;
    for (const auto& p : t.problems) problems += (problems.empty() ? "" : "; ") + p;
    out += fmt::format("- trial seed {}: {}{}{}{}\n", t.seed, errors.empty() ? "no comparison" : errors,
                       t.runs_agree ? "" : ", two runs on the same inputs disagree",
                       problems.empty() ? "" : ": ", problems);
    ++shown;
  }
  return out;
}

std::optional<double> median_of(const BenchmarkResult& b, const std::string& variant,
                                const std::string& mode) {
  const Measurement* m = b.find(variant, mode);
  if (!m || m->samples.empty()) return std::nullopt;
  return m->summary.median;
}

}  // namespace

LlmEvaluation LlmEvaluation::read(const ProjectStore& store, int64_t version) {
  LlmEvaluation e;
  e.validation = ProjectEvidence::latest_validation(store, version);
  e.benchmark = ProjectEvidence::latest_benchmark(store, version);
  return e;
}

std::optional<std::string> LlmEvaluation::build_failure() const {
  if (!validation) return std::nullopt;
  for (const auto& c : validation->checks)
    if (c.name == "build" && !c.passed) return c.detail;
  return std::nullopt;
}

std::optional<double> LlmEvaluation::cold_us() const {
  if (!validation || !validation->passed || !benchmark) return std::nullopt;
  return median_of(*benchmark, "candidate", "cold");
}

std::string LlmFeedback::times(const BenchmarkResult& b) {
  std::string out;
  for (const auto& mode : b.modes()) {
    auto mine = median_of(b, "candidate", mode);
    if (!mine) continue;
    std::string line = fmt::format("- {}: candidate {:.2f} µs", mode, *mine);
    for (const char* baseline : {"eager", "compile"})
      if (auto other = median_of(b, baseline, mode))
        line += fmt::format(", {} {:.2f} µs ({:.2f}x)",
                            std::string(baseline) == "compile" ? "torch.compile" : "eager", *other,
                            *other / *mine);
    out += line + "\n";
  }
  return out;
}

std::string LlmFeedback::digest(const LlmEvaluation& e, const std::string& source, const FusionGroup& group,
                                std::optional<double> best_cold_us,
                                const std::optional<std::string>& compiler_log) {
  if (auto log = e.build_failure()) return compile_digest(compiler_log ? *compiler_log : *log, source);
  if (!e.validation) return "It has not been evaluated.\n";
  if (!e.validation->passed) return validation_digest(*e.validation);
  std::string out = fmt::format("It is correct: {}.\n", e.validation->verdict);
  if (!e.benchmark) return out + "It was not benchmarked.\n";
  out += "Times (medians):\n" + times(*e.benchmark);
  out += fmt::format("Verdict against eager: {}\n", e.benchmark->verdict.sentence);
  const auto cold = median_of(*e.benchmark, "candidate", "cold");
  if (cold && best_cold_us)
    out += *cold <= *best_cold_us
               ? fmt::format("It is the best so far ({:.2f} µs cold).\n", *cold)
               : fmt::format("The best so far takes {:.2f} µs cold: this one is {:.2f}x slower.\n",
                             *best_cold_us, *cold / *best_cold_us);
  if (cold && *cold > 0) {
    const double tb_s = group.bytes / (*cold * 1e6);
    const double tflop_s = group.flops / (*cold * 1e6);
    std::string roofline =
        fmt::format("Roofline: it moves {:.3g} MB at {:.2f} TB/s and does {:.3g} GFLOP at {:.2f} TFLOP/s",
                    group.bytes / 1e6, tb_s, group.flops / 1e9, tflop_s);
    for (const auto& share : e.benchmark->copy_shares)
      if (share.mode == "cold" && share.copy_tb_per_s() > 0) {
        const double fraction = tb_s / share.copy_tb_per_s();
        roofline +=
            fmt::format("; that is {:.0f}% of the copy bandwidth measured beside it ({:.2f} TB/s): {}",
                        100 * fraction, share.copy_tb_per_s(),
                        fraction >= 0.5 ? "memory-bound, close to the floor"
                                        : "far from the memory floor: look for wasted traffic, poor "
                                          "occupancy or compute that dominates");
      }
    out += roofline + ".\n";
  }
  return out;
}

std::string LlmFeedback::hardware(const std::optional<BenchmarkResult>& any) {
  if (!any) return "Not measured yet: assume a recent NVIDIA data-center GPU.";
  const auto& env = any->environment;
  std::string out =
      fmt::format("{} ({}), {} SMs, L2 {} MB, CUDA {}.", env.value("gpu", std::string("unknown GPU")),
                  env.value("capability", std::string("unknown architecture")),
                  env.contains("sm_count") ? env["sm_count"].dump() : std::string("an unknown number of"),
                  env.contains("l2_bytes") && env["l2_bytes"].is_number()
                      ? fmt::format("{:.0f}", env["l2_bytes"].get<double>() / 1048576.0)
                      : std::string("?"),
                  env.value("cuda", std::string("?")));
  for (const auto& share : any->copy_shares)
    if (share.mode == "cold" && share.copy_tb_per_s() > 0)
      out += fmt::format(" Measured device-to-device copy bandwidth: {:.2f} TB/s.", share.copy_tb_per_s());
  out += " fp32 and TF32 peak FLOP rates are not measured by this version.";
  return out;
}

std::string LlmFeedback::bar(const std::optional<BenchmarkResult>& builtin) {
  if (!builtin) return "No builtin kernel was measured for this group: the bar is PyTorch eager.";
  return "The builtin generator's kernel (medians):\n" + times(*builtin) +
         fmt::format("Its verdict against eager: {}\n", builtin->verdict.sentence);
}

}  // namespace nova
