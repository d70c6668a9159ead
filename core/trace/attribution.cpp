#include "core/trace/attribution.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

namespace nova {
namespace {

struct Accumulator {
  double gpu_ns = 0;
  std::vector<std::uint32_t> correlations;  // sorted and deduplicated before counting
  int kernels = 0;
  std::unordered_map<std::uint32_t, double> by_kernel_name;
  int spans = 0;
};

void finish_row(OpStats& row, const Accumulator& acc, double total_ns, int iterations,
                const DeviceCeilings& ceilings, const Trace& trace) {
  row.gpu_ns = acc.gpu_ns;
  row.share = total_ns > 0 ? acc.gpu_ns / total_ns : 0;
  std::vector<std::uint32_t> c = acc.correlations;
  std::sort(c.begin(), c.end());
  row.launches = static_cast<int>(std::unique(c.begin(), c.end()) - c.begin());
  row.kernels = acc.kernels;
  row.calls = iterations > 0 ? iterations : acc.spans;
  double seconds = acc.gpu_ns * 1e-9;
  if (seconds > 0 && row.calls > 0) {
    row.achieved_bytes_per_s = row.bytes * row.calls / seconds;
    row.achieved_flops_per_s = row.flops * row.calls / seconds;
  }
  row.floor_ns = std::max(ceilings.bytes_per_s > 0 ? row.bytes / ceilings.bytes_per_s : 0.0,
                          ceilings.flops_per_s > 0 ? row.flops / ceilings.flops_per_s : 0.0) *
                 1e9;
  if (row.floor_ns > 0 && row.calls > 0) row.headroom = (acc.gpu_ns / row.calls) / row.floor_ns;
  std::vector<std::pair<double, std::uint32_t>> names;
  for (auto [name, ns] : acc.by_kernel_name) names.emplace_back(ns, name);
  std::sort(names.begin(), names.end(), [](auto& a, auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < names.size() && i < 5; ++i)
    row.top_kernels.push_back(trace.names[names[i].second]);
}

void add(Accumulator& acc, const GpuActivity& a) {
  acc.gpu_ns += static_cast<double>(a.duration());
  acc.correlations.push_back(a.correlation);
  if (a.kind == ActivityKind::Kernel) {
    ++acc.kernels;
    acc.by_kernel_name[a.name] += static_cast<double>(a.duration());
  }
}

// Iterations whose start lies inside a start/stop window (warm-up marks fall outside).
int traced_iterations(const Trace& trace) {
  return static_cast<int>(std::count_if(trace.iterations.begin(), trace.iterations.end(),
                                        [&](const auto& mark) { return trace.in_window(mark.first); }));
}

}  // namespace

const OpStats* AttributionResult::node(int id) const {
  for (const auto& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

const OpStats* AttributionResult::group(int id) const {
  for (const auto& g : groups)
    if (g.id == id) return &g;
  return nullptr;
}

AttributionResult Attribution::compute(const Trace& trace, const ModelGraph& graph,
                                       const DeviceCeilings& ceilings) {
  AttributionResult r;
  r.ceilings = ceilings;
  r.iterations = traced_iterations(trace);
  r.node_of_activity.assign(trace.activities.size(), -1);

  std::map<int, Accumulator> per_node;
  std::map<int, Accumulator> per_group;
  Accumulator outside;
  for (std::size_t i = 0; i < trace.activities.size(); ++i) {
    const auto& a = trace.activities[i];
    r.total_gpu_ns += static_cast<double>(a.duration());
    long found = trace.node_of(a.correlation);
    if (found < 0) {
      add(outside, a);
      continue;
    }
    int node = static_cast<int>(found);
    r.node_of_activity[i] = node;
    add(per_node[node], a);
    if (const FusionGroup* g = graph.group_of(node)) add(per_group[g->id], a);
  }

  // The op row: runs of consecutive activities of one node (in start order, across streams).
  for (std::size_t i = 0; i < trace.activities.size(); ++i) {
    int node = r.node_of_activity[i];
    if (node < 0) continue;
    const auto& a = trace.activities[i];
    if (!r.spans.empty() && r.spans.back().node == node && r.spans.back().first + r.spans.back().count == i) {
      r.spans.back().end = std::max(r.spans.back().end, a.end);
      ++r.spans.back().count;
      continue;
    }
    // An unattributed activity between two of the same node still splits the run.
    r.spans.push_back(OpSpan{node, a.start, a.end, static_cast<std::uint32_t>(i), 1});
  }
  for (const auto& s : r.spans) {
    per_node[s.node].spans++;
    if (const FusionGroup* g = graph.group_of(s.node)) per_group[g->id].spans++;
  }
  // A group runs once when its members run once: its calls are those of its most frequent member,
  // not the sum over members.
  for (auto& [gid, acc] : per_group) {
    int most = 0;
    for (const auto& g : graph.groups)
      if (g.id == gid)
        for (int n : g.nodes)
          if (per_node.count(n)) most = std::max(most, per_node[n].spans);
    acc.spans = most;
  }

  for (auto& [id, acc] : per_node) {
    OpStats row;
    row.level = OpStats::Level::Node;
    row.id = id;
    row.nodes = {id};
    if (const GraphNode* n = graph.node(id)) {
      row.name = n->op;
      row.op_class = to_string(n->op_class);
      row.flops = n->flops;
      row.bytes = n->bytes;
    } else {
      row.name = fmt::format("node {}", id);
    }
    finish_row(row, acc, r.total_gpu_ns, r.iterations, ceilings, trace);
    r.nodes.push_back(std::move(row));
  }
  for (auto& [id, acc] : per_group) {
    const FusionGroup* g = nullptr;
    for (const auto& candidate : graph.groups)
      if (candidate.id == id) g = &candidate;
    OpStats row;
    row.level = OpStats::Level::Group;
    row.id = id;
    row.nodes = g->nodes;
    row.op_class = g->kind;
    row.flops = g->flops;
    row.bytes = g->bytes;
    std::string members;
    for (int n : g->nodes) {
      const GraphNode* node = graph.node(n);
      members += (members.empty() ? "" : ", ") + (node ? node->op : std::to_string(n));
    }
    row.name = fmt::format("{} #{}: {}", g->kind, id, members);
    finish_row(row, acc, r.total_gpu_ns, r.iterations, ceilings, trace);
    r.groups.push_back(std::move(row));
  }
  r.unattributed.level = OpStats::Level::Unattributed;
  r.unattributed.name = "(outside graph nodes)";
  r.unattributed.op_class = "";
  finish_row(r.unattributed, outside, r.total_gpu_ns, r.iterations, ceilings, trace);
  r.attributed_fraction = r.total_gpu_ns > 0 ? 1.0 - outside.gpu_ns / r.total_gpu_ns : 0;
  const bool costed = std::any_of(graph.nodes.begin(), graph.nodes.end(),
                                  [](const GraphNode& n) { return n.flops > 0 || n.bytes > 0; });
  if (graph.nodes.empty())
    r.costs_missing = "no model graph: bandwidth, FLOP rate and headroom need each node's bytes and FLOPs";
  else if (!costed)
    r.costs_missing =
        "the graph has no cost estimates (a profiling worker's node list, not intake's graph): "
        "bandwidth, FLOP rate and headroom need each node's bytes and FLOPs";
  return r;
}

}  // namespace nova
