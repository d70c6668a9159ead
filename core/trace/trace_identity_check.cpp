#include "core/trace/trace_identity_check.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/env/fnv1a.h"
#include "core/trace/injection/trace_format.h"

namespace nova {
namespace {

std::string hex(std::uint64_t h) { return fmt::format("{:016x}", h); }

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string graph_model_name(const ModelGraph& graph) {
  return graph.model_path.empty() ? std::string("the open model")
                                  : std::filesystem::path(graph.model_path).filename().string();
}

}  // namespace

std::string TraceIdentityCheck::graph_hash(const ModelGraph& graph) {
  std::string key;
  for (const auto& n : graph.nodes) key += fmt::format("{}:{};", n.id, n.target);
  return hex(fnv1a64(key));
}

TraceIdentity TraceIdentityCheck::of(const std::filesystem::path& model, const ModelGraph& graph) {
  TraceIdentity id;
  id.model_name = model.filename().string();
  id.model_hash = hex(fnv1a64(file_text(model)));
  id.graph_hash = graph_hash(graph);
  return id;
}

void TraceIdentityCheck::stamp(const std::filesystem::path& trace_file, const TraceIdentity& identity) {
  const std::string text = nlohmann::json{{"model_name", identity.model_name},
                                          {"model_hash", identity.model_hash},
                                          {"graph_hash", identity.graph_hash}}
                               .dump();
  tracefmt::RecordHeader header{static_cast<std::uint16_t>(tracefmt::RecordType::Identity), 0,
                                static_cast<std::uint32_t>(text.size())};
  std::ofstream out(trace_file, std::ios::binary | std::ios::app);
  out.write(reinterpret_cast<const char*>(&header), sizeof header);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("cannot write the trace's identity to " + trace_file.string());
}

std::string TraceIdentityCheck::problem(const Trace& trace, const ModelGraph& graph,
                                        const std::string& trace_name) {
  if (graph.nodes.empty()) return {};
  if (trace.identity.present() && trace.identity.graph_hash != graph_hash(graph))
    return fmt::format(
        "{} was recorded from {} (graph {}), not from {} (graph {}): open {} to see this trace",
        trace_name, trace.identity.model_name, trace.identity.graph_hash, graph_model_name(graph),
        graph_hash(graph), trace.identity.model_name);
  // Traces without an identity: a kernel tagged with a node the graph does not have gives away
  // another model's trace.
  for (const auto& [correlation, node] : trace.node_of_correlation)
    if (!graph.node(static_cast<int>(node)))
      return fmt::format(
          "{} tags kernels with graph node {}, which {} (graph {}, {} nodes) does not have: it was "
          "recorded from another model",
          trace_name, node, graph_model_name(graph), graph_hash(graph), graph.nodes.size());
  return {};
}

std::string TraceIdentityCheck::note(const Trace& trace, const ModelGraph& graph, const std::string& trace_name) {
  if (!trace.identity.present())
    return fmt::format(
        "{} does not say which model it was recorded from (recorded before traces carried it): "
        "attributed to {} by node id",
        trace_name, graph.nodes.empty() ? std::string("node ids only") : graph_model_name(graph));
  if (!graph.model_path.empty() && std::filesystem::exists(graph.model_path) &&
      of(graph.model_path, graph).model_hash != trace.identity.model_hash)
    return fmt::format("{} was recorded from an earlier text of {} (same graph)", trace_name,
                       trace.identity.model_name);
  return {};
}

}  // namespace nova
