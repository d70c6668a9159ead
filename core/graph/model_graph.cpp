#include "core/graph/model_graph.h"

#include <stdexcept>

namespace nova {
using nlohmann::json;

std::string to_string(OpClass c) {
  switch (c) {
    case OpClass::Convolution:
      return "convolution";
    case OpClass::Matmul:
      return "matmul";
    case OpClass::Elementwise:
      return "elementwise";
    case OpClass::Reduction:
      return "reduction";
    case OpClass::Normalization:
      return "normalization";
    case OpClass::DataMovement:
      return "data_movement";
    case OpClass::Other:
      return "other";
  }
  return "other";
}

OpClass op_class_from_string(const std::string& s) {
  for (OpClass c : {OpClass::Convolution, OpClass::Matmul, OpClass::Elementwise, OpClass::Reduction,
                    OpClass::Normalization, OpClass::DataMovement, OpClass::Other})
    if (to_string(c) == s) return c;
  return OpClass::Other;
}

const GraphNode* ModelGraph::node(int id) const {
  for (const auto& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

const FusionGroup* ModelGraph::group_of(int node_id) const {
  for (const auto& g : groups)
    for (int n : g.nodes)
      if (n == node_id) return &g;
  return nullptr;
}

const GraphNode* ModelGraph::producer(const std::string& tensor) const {
  for (const auto& n : nodes)
    for (const auto& o : n.outputs)
      if (o.name == tensor) return &n;
  return nullptr;
}

void to_json(json& j, const TensorInfo& t) {
  j = {{"name", t.name}, {"shape", t.shape}, {"stride", t.stride}, {"dtype", t.dtype}};
}
void from_json(const json& j, TensorInfo& t) {
  t.name = j.value("name", "");
  t.shape = j.value("shape", std::vector<std::int64_t>{});
  t.stride = j.value("stride", std::vector<std::int64_t>{});
  t.dtype = j.value("dtype", "");
}

void to_json(json& j, const NodeArg& a) {
  j = {{"name", a.name}, {"tensor", a.tensor}, {"constant", a.constant}};
}
void from_json(const json& j, NodeArg& a) {
  a.name = j.value("name", "");
  a.tensor = j.value("tensor", "");
  a.constant = j.contains("constant") ? j.at("constant") : json();
}

void to_json(json& j, const GraphNode& n) {
  j = {{"id", n.id},
       {"target", n.target},
       {"op", n.op},
       {"op_class", to_string(n.op_class)},
       {"args", n.args},
       {"outputs", n.outputs},
       {"scope", n.scope},
       {"scope_type", n.scope_type},
       {"file", n.file},
       {"line", n.line},
       {"source_text", n.source_text},
       {"flops", n.flops},
       {"bytes", n.bytes}};
}
void from_json(const json& j, GraphNode& n) {
  n.id = j.at("id").get<int>();
  n.target = j.value("target", "");
  n.op = j.value("op", "");
  n.op_class = op_class_from_string(j.value("op_class", "other"));
  n.args = j.value("args", std::vector<NodeArg>{});
  n.outputs = j.value("outputs", std::vector<TensorInfo>{});
  n.scope = j.value("scope", "");
  n.scope_type = j.value("scope_type", "");
  n.file = j.value("file", "");
  n.line = j.value("line", 0);
  n.source_text = j.value("source_text", "");
  n.flops = j.value("flops", 0.0);
  n.bytes = j.value("bytes", 0.0);
}

void to_json(json& j, const ParamInfo& p) {
  j = {{"name", p.name}, {"graph_input", p.graph_input}, {"tensor", p.tensor}, {"is_buffer", p.is_buffer}};
}
void from_json(const json& j, ParamInfo& p) {
  p.name = j.value("name", "");
  p.graph_input = j.value("graph_input", "");
  p.tensor = j.value("tensor", TensorInfo{});
  p.is_buffer = j.value("is_buffer", false);
}

void to_json(json& j, const FusionGroup& g) {
  j = {{"id", g.id},       {"kind", g.kind},     {"anchor", g.anchor ? json(*g.anchor) : json()},
       {"nodes", g.nodes}, {"inputs", g.inputs}, {"outputs", g.outputs},
       {"flops", g.flops}, {"bytes", g.bytes},   {"functional_source", g.functional_source}};
}
void from_json(const json& j, FusionGroup& g) {
  g.id = j.at("id").get<int>();
  g.kind = j.value("kind", "");
  if (j.contains("anchor") && !j.at("anchor").is_null())
    g.anchor = j.at("anchor").get<int>();
  else
    g.anchor.reset();
  g.nodes = j.value("nodes", std::vector<int>{});
  g.inputs = j.value("inputs", std::vector<std::string>{});
  g.outputs = j.value("outputs", std::vector<std::string>{});
  g.flops = j.value("flops", 0.0);
  g.bytes = j.value("bytes", 0.0);
  g.functional_source = j.value("functional_source", "");
}

void to_json(json& j, const ModelGraph& g) {
  j = {{"format", "nova.model_graph"},
       {"version", 1},
       {"model_path", g.model_path},
       {"model_form", g.model_form},
       {"capture_route", g.capture_route},
       {"warnings", g.warnings},
       {"inputs", g.inputs},
       {"scalar_inputs", g.scalar_inputs},
       {"outputs", g.outputs},
       {"params", g.params},
       {"nodes", g.nodes},
       {"groups", g.groups},
       {"saved_inputs", g.saved_inputs},
       {"torch_version", g.torch_version}};
}
void from_json(const json& j, ModelGraph& g) {
  if (j.value("format", "") != "nova.model_graph")
    throw std::runtime_error("not a Nova model graph (missing \"format\": \"nova.model_graph\")");
  if (j.value("version", 0) > 1)
    throw std::runtime_error("model graph written by a newer Nova (version " +
                             std::to_string(j.value("version", 0)) + ")");
  g.model_path = j.value("model_path", "");
  g.model_form = j.value("model_form", "");
  g.capture_route = j.value("capture_route", "");
  g.warnings = j.value("warnings", std::vector<std::string>{});
  g.inputs = j.value("inputs", std::vector<TensorInfo>{});
  g.scalar_inputs = j.value("scalar_inputs", std::vector<json>{});
  g.outputs = j.value("outputs", std::vector<TensorInfo>{});
  g.params = j.value("params", std::vector<ParamInfo>{});
  g.nodes = j.value("nodes", std::vector<GraphNode>{});
  g.groups = j.value("groups", std::vector<FusionGroup>{});
  g.saved_inputs = j.value("saved_inputs", "");
  g.torch_version = j.value("torch_version", "");
}

}  // namespace nova
