#include "core/trace/hot_op_ranking.h"

#include <algorithm>

#include <fmt/format.h>

namespace nova {
namespace {

std::string rate(double v, const char* unit) {
  if (v <= 0) return "-";
  if (v >= 1e12) return fmt::format("{:.2f} T{}", v / 1e12, unit);
  if (v >= 1e9) return fmt::format("{:.1f} G{}", v / 1e9, unit);
  return fmt::format("{:.1f} M{}", v / 1e6, unit);
}

}  // namespace

std::vector<OpStats> HotOpRanking::rank(const AttributionResult& result, By by, bool include_unattributed) {
  std::vector<OpStats> rows = by == By::Group ? result.groups : result.nodes;
  if (by == By::Group) {
    // Nodes outside every group still take GPU time: list them as themselves.
    for (const auto& n : result.nodes) {
      bool grouped = std::any_of(result.groups.begin(), result.groups.end(), [&](const OpStats& g) {
        return std::find(g.nodes.begin(), g.nodes.end(), n.id) != g.nodes.end();
      });
      if (!grouped) rows.push_back(n);
    }
  }
  std::sort(rows.begin(), rows.end(), [](const OpStats& a, const OpStats& b) {
    if (a.gpu_ns != b.gpu_ns) return a.gpu_ns > b.gpu_ns;
    if (a.level != b.level) return a.level < b.level;
    return a.id < b.id;
  });
  if (include_unattributed && result.unattributed.gpu_ns > 0) rows.push_back(result.unattributed);
  return rows;
}

std::string HotOpRanking::to_text(const std::vector<OpStats>& rows, std::size_t max_rows) {
  std::string out =
      fmt::format("{:>3}  {:>6}  {:>10}  {:>5}  {:>7}  {:>11}  {:>12}  {:>8}  {}\n", "#", "share", "us/call",
                  "calls", "kernels", "bandwidth", "FLOP rate", "headroom", "op");
  for (std::size_t i = 0; i < rows.size() && i < max_rows; ++i) {
    const auto& r = rows[i];
    double per_call_us = r.calls > 0 ? r.gpu_ns / r.calls / 1e3 : r.gpu_ns / 1e3;
    std::string head = r.headroom > 0 ? fmt::format("{:.1f}x", r.headroom) : "-";
    std::string label = r.level == OpStats::Level::Node ? fmt::format("[{}] {}", r.id, r.name) : r.name;
    out += fmt::format("{:>3}  {:>5.1f}%  {:>10.2f}  {:>5}  {:>7}  {:>11}  {:>12}  {:>8}  {}\n", i + 1,
                       r.share * 100, per_call_us, r.calls, r.kernels, rate(r.achieved_bytes_per_s, "B/s"),
                       rate(r.achieved_flops_per_s, "FLOP/s"), head, label);
  }
  if (rows.size() > max_rows) out += fmt::format("  ... {} more\n", rows.size() - max_rows);
  return out;
}

std::string HotOpRanking::dash_meaning(const AttributionResult& result) {
  if (!result.costs_missing.empty()) return "-: " + result.costs_missing;
  return "-: no cost estimate for the op (intake counts no bytes or FLOPs for views and some "
         "library ops), or GPU time outside graph nodes";
}

}  // namespace nova
