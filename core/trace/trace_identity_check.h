#pragma once
// Ties a trace to the model and graph it was recorded from: the profile runner stamps a trace file
// with its TraceIdentity, and `nova profile --from-trace` and the studio ask problem() before they
// attribute a trace to a graph, so one model's kernels are never counted against another's nodes.
#include <filesystem>
#include <string>

#include "core/graph/model_graph.h"
#include "core/trace/trace.h"

namespace nova {

class TraceIdentityCheck {
 public:
  // The identity of a trace recorded from `model` (read now) and `graph`.
  static TraceIdentity of(const std::filesystem::path& model, const ModelGraph& graph);
  static std::string graph_hash(const ModelGraph& graph);
  // Appends an identity record to a .novatrace file. Throws std::runtime_error naming the file.
  static void stamp(const std::filesystem::path& trace_file, const TraceIdentity& identity);

  // Why `trace` cannot be attributed to `graph`, naming both (another graph, or node ids the graph
  // does not have); empty when it can. `trace_name` names the trace in the sentence.
  static std::string problem(const Trace& trace, const ModelGraph& graph, const std::string& trace_name);
  // A note for what is checked but not refused: a trace without identity (recorded before traces
  // carried one), or a model file whose text changed since; empty otherwise.
  static std::string note(const Trace& trace, const ModelGraph& graph, const std::string& trace_name);
};

}  // namespace nova
