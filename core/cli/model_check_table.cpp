#include "core/cli/model_check_table.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace nova {
namespace {

using json = nlohmann::json;

std::string interval_text(const ModelRatio* r) { return r ? r->text() : "-"; }

std::string verdict(const ModelRatio* r) {
  if (!r || !r->interval) return "";
  return r->interval->above_one() ? "faster" : r->interval->below_one() ? "slower" : "tie";
}

// The profile's split: each shipped group before and after, the rest of the call, the totals.
std::string format_split(const ModelCheckResult& r) {
  if (r.gpu_split.empty()) return "";
  const auto before = r.split_bar("before"), after = r.split_bar("after");
  if (!before || !after)
    return "\nGPU time by fusion group: not profiled: " +
           (r.gpu_split.contains("error") ? r.gpu_split["error"].get<std::string>() : r.split_missing()) + "\n";
  std::string out = fmt::format("\nGPU time per call by fusion group (torch.profiler, {} warm calls; kernel durations)\n",
                                r.gpu_split.value("iters", 0));
  out += fmt::format("{:<48} {:>12} {:>12}\n", "", "before us", "after us");
  for (std::size_t i = 0; i < before->shipped.size(); ++i)
    out += fmt::format("{:<48} {:>12.2f} {:>12.2f}\n", fmt::format("group {} (ships)", before->shipped[i].first),
                       before->shipped[i].second, after->shipped[i].second);
  out += fmt::format("{:<48} {:>12.2f} {:>12.2f}\n", "the rest (groups left to PyTorch, outside groups)", before->rest_us,
                     after->rest_us);
  out += fmt::format("{:<48} {:>12.2f} {:>12.2f}\n", "total", before->total_us, after->total_us);
  if (r.gpu_split.contains("before_plain"))
    out += fmt::format("(the Model profiled as it is, without the groups' ranges: {:.2f} us)\n",
                       r.gpu_split["before_plain"].value("total_us", 0.0));
  return out;
}

}  // namespace

std::string ModelCheckTable::format(const ModelCheckResult& r) {
  std::string out = fmt::format("whole model with {}: {}\n", r.package,
                                r.passed ? fmt::format("validation passed ({} trials)", r.trials.size())
                                         : "validation FAILED: " + (r.failures.empty() ? "" : r.failures.front()));
  long kernel = 0, fallback = 0;
  for (const auto& [op, c] : r.calls) kernel += c.kernel, fallback += c.fallback;
  if (!r.calls.empty())
    out += fmt::format("group calls during validation: {} ran the package's kernels, {} the original PyTorch ops\n",
                       kernel, fallback);
  for (const auto& f : r.flags) out += "flag: " + f + "\n";
  if (!r.measurements.empty()) {
    out += fmt::format("\n{:<20} {:>12} {:>12} {:>14}\n", "variant", "cold us", "wall us", "energy mJ/call");
    std::string no_energy;
    for (const std::string v : {"eager", "compile", "optimized", "optimized+compile"}) {
      auto median = [&](const std::string& mode) {
        for (const auto& m : r.measurements)
          if (m.variant == v && m.mode == mode) return fmt::format("{:.2f}", m.summary.median);
        return std::string("-");
      };
      const auto mj = r.energy_mj(v);
      if (!mj && no_energy.empty()) no_energy = r.energy_missing(v);
      out += fmt::format("{:<20} {:>12} {:>12} {:>14}\n", v, median("cold"), median("wall"),
                         mj ? fmt::format("{:.3f}", *mj) : std::string("-"));
    }
    if (!no_energy.empty()) out += "energy -: " + no_energy + "\n";
    out += fmt::format("\n{:<32} {:<28} {:<28}\n", "ratio (95% interval)", "cold", "wall");
    static const std::vector<std::pair<std::string, std::string>> kRows = {{"optimized", "eager"},
                                                                         {"optimized", "compile"},
                                                                         {"optimized+compile", "compile"},
                                                                         {"optimized+compile", "optimized"}};
    for (const auto& [subject, baseline] : kRows) {
      const ModelRatio* c = r.ratio("cold", subject, baseline);
      const ModelRatio* w = r.ratio("wall", subject, baseline);
      if (!c && !w) continue;
      out += fmt::format("{:<32} {:<28} {:<28}\n", subject + " vs " + baseline,
                         interval_text(c) + (c ? " " + verdict(c) : ""), interval_text(w) + (w ? " " + verdict(w) : ""));
    }
    for (const auto& [variant, why] : r.bench_errors.items()) out += fmt::format("{}: {}\n", variant, why.get<std::string>());
  }
  if (r.amdahl_estimate)
    out += fmt::format("\nAmdahl estimate from the groups (cold vs eager): {:.2f}x; measured: {}\n", *r.amdahl_estimate,
                       interval_text(r.ratio("cold", "optimized", "eager")));
  out += format_split(r);
  for (const auto& line : r.review) out += "review: " + line + "\n";
  out += "fp32 with TF32 off on both sides unless the model sets otherwise; a ratio is faster or slower only when its "
         "95% interval excludes 1.0 (tie otherwise)\n";
  if (r.bench_method.contains("autograd") && r.bench_method["autograd"].is_string())
    out += "autograd " + r.bench_method["autograd"].get<std::string>() + "\n";
  return out;
}

}  // namespace nova
