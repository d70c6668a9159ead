#include "core/trace/chrome_trace_export.h"

#include <fstream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace nova {
namespace {

using nlohmann::json;

const char* category(ActivityKind k) {
  switch (k) {
    case ActivityKind::Kernel:
      return "kernel";
    case ActivityKind::Memcpy:
      return "memcpy";
    case ActivityKind::Memset:
      return "memset";
  }
  return "gpu";
}

std::string node_label(const ModelGraph& graph, int id) {
  const GraphNode* n = graph.node(id);
  return n ? fmt::format("{} [{}]", n->op, id) : fmt::format("node {}", id);
}

}  // namespace

json ChromeTraceExport::to_json(const Trace& trace, const AttributionResult& attribution,
                                const ModelGraph& graph) {
  json events = json::array();
  const double t0 = static_cast<double>(trace.begin_ns());
  auto us = [&](std::uint64_t ns) { return (static_cast<double>(ns) - t0) / 1e3; };

  std::set<std::uint32_t> devices;
  std::set<std::pair<std::uint32_t, std::uint32_t>> streams;
  for (std::size_t i = 0; i < trace.activities.size(); ++i) {
    const auto& a = trace.activities[i];
    devices.insert(a.device);
    streams.emplace(a.device, a.stream);
    json args = {{"correlation", a.correlation}};
    int node = i < attribution.node_of_activity.size() ? attribution.node_of_activity[i] : -1;
    if (node >= 0) args["node"] = node;
    if (a.kind == ActivityKind::Kernel) {
      args["grid"] = {a.grid[0], a.grid[1], a.grid[2]};
      args["block"] = {a.block[0], a.block[1], a.block[2]};
      args["registers per thread"] = a.registers;
      args["static shared memory"] = a.shared.static_bytes;
      args["dynamic shared memory"] = a.shared.dynamic_bytes;
    } else {
      args["bytes"] = a.bytes;
    }
    events.push_back({{"name", trace.names[a.name]},
                      {"cat", category(a.kind)},
                      {"ph", "X"},
                      {"pid", a.device},
                      {"tid", a.stream},
                      {"ts", us(a.start)},
                      {"dur", static_cast<double>(a.duration()) / 1e3},
                      {"args", std::move(args)}});
  }
  std::uint32_t first_device = devices.empty() ? 0 : *devices.begin();
  for (const auto& s : attribution.spans)
    events.push_back({{"name", node_label(graph, s.node)},
                      {"cat", "op"},
                      {"ph", "X"},
                      {"pid", trace.activities[s.first].device},
                      {"tid", kOpsThread},
                      {"ts", us(s.start)},
                      {"dur", static_cast<double>(s.end - s.start) / 1e3},
                      {"args", {{"node", s.node}, {"activities", s.count}}}});
  for (const auto& m : trace.markers)
    events.push_back({{"name", m.name},
                      {"cat", "nvtx"},
                      {"ph", m.end > m.start ? "X" : "i"},
                      {"pid", first_device},
                      {"tid", kNvtxThread},
                      {"ts", us(m.start)},
                      {"dur", static_cast<double>(m.end - m.start) / 1e3}});

  for (std::uint32_t d : devices) {
    const TraceDevice* dev = trace.device(d);
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", d},
                      {"args", {{"name", fmt::format("GPU {}{}", d, dev ? " " + dev->name : "")}}}});
    events.push_back(
        {{"name", "thread_name"}, {"ph", "M"}, {"pid", d}, {"tid", kOpsThread}, {"args", {{"name", "ops"}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", d},
                      {"tid", kOpsThread},
                      {"args", {{"sort_index", -1}}}});
  }
  if (!trace.markers.empty())
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", first_device},
                      {"tid", kNvtxThread},
                      {"args", {{"name", "NVTX"}}}});
  for (auto [d, s] : streams)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", d},
                      {"tid", s},
                      {"args", {{"name", fmt::format("stream {}", s)}}}});

  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData",
           {{"producer", "nova profile"},
            {"dropped_records", trace.stats.dropped_records},
            {"attributed_fraction", attribution.attributed_fraction},
            {"model", graph.model_path}}}};
}

void ChromeTraceExport::write(const std::filesystem::path& path, const Trace& trace,
                              const AttributionResult& attribution, const ModelGraph& graph) {
  auto tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
    out << to_json(trace, attribution, graph).dump();
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace nova
