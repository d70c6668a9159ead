#include "core/cli/selection_table.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace nova {
namespace {


std::string speedup_cell(const BenchmarkResult* b, const std::string& mode, const std::string& base) {
  if (!b) return "-";
  for (const auto& s : b->speedups)
    if (s.mode == mode && s.baseline == base) return format_ratio(s.value);
  return "-";
}

// The largest error against float64 as a multiple of eager's own (1.00: as accurate as eager).
std::string error_cell(const ValidationResult* v) {
  if (!v) return "-";
  const auto& errors = v->raw.value("max_errors", nlohmann::json::object());
  if (!errors.is_object() || !errors.contains("vs_fp64_abs") || !errors.contains("eager_vs_fp64_abs") ||
      !errors["vs_fp64_abs"].is_number() || !errors["eager_vs_fp64_abs"].is_number())
    return "-";
  double eager = errors["eager_vs_fp64_abs"].get<double>();
  if (eager <= 0) return "-";
  return fmt::format("{:.2f}", errors["vs_fp64_abs"].get<double>() / eager);
}

}  // namespace

std::string SelectionTable::format_model(const ModelFigures& m) {
  std::string out;
  auto get = [&](const char* mode, const char* base) {
    auto it = m.geomean.find({mode, base});
    return it == m.geomean.end() ? std::string("-") : format_ratio(it->second);
  };
  out += fmt::format("groups: {}, {} ship a kernel, {} benchmarked; a group that keeps eager counts 1.00x vs eager "
                     "and eager's own ratio vs torch.compile\n",
                     m.groups, m.shipped, m.measured);
  if (m.measured == 0) return out + "no group was benchmarked against eager: no speedup to report\n";
  if (!m.mixed_gpus.empty())
    out += fmt::format("WARNING: the groups were measured on different GPUs ({}): the figures below mix them; "
                       "measure again on one kind (nova optimize --remeasure)\n",
                       fmt::join(m.mixed_gpus, ", "));
  out += fmt::format("geometric mean vs eager          cold {:>7}  wall {:>7}\n", get("cold", "eager"),
                     get("wall", "eager"));
  out += fmt::format("geometric mean vs torch.compile  cold {:>7}  wall {:>7}\n", get("cold", "compile"),
                     get("wall", "compile"));
  auto slow = [&](const char* mode) {
    auto it = m.slowest_vs_eager.find(mode);
    return it == m.slowest_vs_eager.end() ? std::string("-") : format_ratio(it->second);
  };
  out += fmt::format("slowest group vs eager           cold {:>7}  wall {:>7}\n", slow("cold"), slow("wall"));
  // Shares from eager group times leave out the groups with no benchmark (declined, failed): say how many,
  // since the estimate knows nothing of their time.
  const int unmeasured = m.groups - m.measured;
  const std::string left_out =
      m.shares_from == "eager group times" && unmeasured > 0
          ? fmt::format("; {} group{} without a benchmark left out", unmeasured, unmeasured == 1 ? "" : "s")
          : std::string();
  if (m.amdahl_vs_eager)
    out += fmt::format("whole model vs eager, estimated: {} of GPU time (Amdahl, shares from {}{}{})\n",
                       format_ratio(*m.amdahl_vs_eager), m.shares_from,
                       m.covered_share < 0.999 ? fmt::format("; groups cover {:.0f}% of it", 100 * m.covered_share)
                                               : std::string(),
                       left_out);
  else
    out += "whole model vs eager, estimated: not available (no group was benchmarked against eager)\n";
  return out;
}

std::string SelectionTable::format(const std::string& model, const std::vector<GroupEvidence>& evidence,
                                   const Selection& selection) {
  std::string out = fmt::format("{:<6}{:<6}{:<24}{:<7}{:>9} {:>10} {:>9} {:>10} {:>9}  {}\n", "group", "ver", "rule",
                                "valid", "err/eager", "cold eager", "cold comp", "wall eager", "wall comp", "verdict");
  std::vector<std::string> memory;
  for (const auto& g : evidence) {
    for (const auto& v : g.versions) {
      if (v.generator_declined) {
        out += fmt::format("{:<6}{:<6}declined by the generator: {}\n", g.group_id, "-", *v.generator_declined);
        continue;
      }
      const BenchmarkResult* b = v.benchmark ? &*v.benchmark : nullptr;
      const ValidationResult* val = v.validation ? &*v.validation : nullptr;
      // "pass*": passed as closer to exact than eager (the tolerance policy's second rule).
      std::string valid = !val ? "none" : !val->passed ? "FAIL" : val->closer_to_exact ? "pass*" : "pass";
      std::string verdict = b ? b->verdict.sentence : val && !val->passed ? val->verdict : "not benchmarked";
      out += fmt::format("{:<6}{:<6}{:<24}{:<7}{:>9} {:>10} {:>9} {:>10} {:>9}  {}\n", g.group_id,
                         fmt::format("v{}", v.version_id), v.rule.substr(0, 23), valid, error_cell(val),
                         speedup_cell(b, "cold", "eager"), speedup_cell(b, "cold", "compile"),
                         speedup_cell(b, "wall", "eager"), speedup_cell(b, "wall", "compile"), verdict);
      if (b)
        for (const auto& share : b->copy_shares)
          if (share.mode == "cold" && share.share() > 0.5)
            memory.push_back(fmt::format(
                "  group {} v{}: {:.1f} MB in {:.2f} us cold ({} L2); a copy of the same bytes alongside took "
                "{:.2f} us ({:.2f} TB/s): {:.1f}% of the copy's speed",
                g.group_id, v.version_id, share.bytes / 1e6, share.candidate_us, b->l2_flush(), share.copy_us,
                share.copy_tb_per_s(), 100 * share.share()));
    }
  }
  bool closer = false;
  for (const auto& g : evidence)
    for (const auto& v : g.versions) closer = closer || (v.validation && v.validation->closer_to_exact);
  if (closer)
    out += "pass*: closer to exact than eager (differs from eager beyond the tolerance, but no element is further "
           "from the float64 result than eager's; --match-eager refuses these)\n";
  out += fmt::format("\n{}: what each group ships\n", model);
  for (const auto& g : selection.groups)
    out += fmt::format("  group {} ({}): {}: {}\n", g.group_id, g.kind, to_string(g.outcome), g.reason);
  if (!memory.empty()) {
    out += "memory-bound versions (over half a copy's speed, cold):\n";
    for (const auto& line : memory) out += line + "\n";
  }
  out += "\n" + format_model(selection.model);
  return out;
}

}  // namespace nova
