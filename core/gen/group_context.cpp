#include "core/gen/group_context.h"

#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

namespace nova {

GroupContext::GroupContext(const ModelGraph& g, const FusionGroup& grp, GenerationTarget t)
    : graph(g), group(grp), target(std::move(t)) {
  std::map<std::string, TensorInfo> known;
  for (const auto& i : graph.inputs) known[i.name] = i;
  for (const auto& p : graph.params) known[p.graph_input] = p.tensor;
  for (const auto& n : graph.nodes)
    for (const auto& o : n.outputs) known[o.name] = o;
  for (const auto& name : group.inputs) {
    auto it = known.find(name);
    if (it == known.end()) throw UnsupportedGroup("group input '" + name + "' is not in the graph");
    inputs.push_back(it->second);
    input_names.push_back("in_" + c_identifier(name));
  }
  for (const auto& name : group.outputs) {
    auto it = known.find(name);
    if (it == known.end()) throw UnsupportedGroup("group output '" + name + "' is not in the graph");
    outputs.push_back(it->second);
    output_names.push_back("out_" + c_identifier(name));
  }
  if (outputs.empty()) throw UnsupportedGroup("the group has no outputs");
}

std::string GroupContext::c_identifier(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::string GroupContext::shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

const GraphNode* GroupContext::anchor() const { return group.anchor ? graph.node(*group.anchor) : nullptr; }

std::vector<const GraphNode*> GroupContext::nodes() const {
  // One index of the graph's nodes, not a search of them per group node: groups of thousands of
  // ops would take quadratic time.
  std::unordered_map<int, const GraphNode*> by_id;
  for (const auto& n : graph.nodes) by_id.emplace(n.id, &n);
  std::vector<const GraphNode*> out;
  for (int id : group.nodes)
    if (auto it = by_id.find(id); it != by_id.end()) out.push_back(it->second);
  return out;
}

std::vector<const GraphNode*> GroupContext::nodes_after_anchor() const {
  std::vector<const GraphNode*> out;
  bool after = false;
  for (const GraphNode* n : nodes()) {
    if (after) out.push_back(n);
    if (group.anchor && n->id == *group.anchor) after = true;
  }
  return out;
}

std::string GroupContext::storage_type(std::size_t i) const {
  return PointwiseEmitter::storage_type(inputs[i].dtype);
}
std::string GroupContext::output_storage_type(std::size_t i) const {
  return PointwiseEmitter::storage_type(outputs[i].dtype);
}

std::string GroupContext::kernel_params() const {
  std::vector<std::string> params;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    params.push_back(fmt::format("const {}* __restrict__ {}", storage_type(i), input_names[i]));
  for (std::size_t k = 0; k < outputs.size(); ++k)
    params.push_back(fmt::format("{}* __restrict__ {}", output_storage_type(k), output_names[k]));
  std::string s;
  for (std::size_t i = 0; i < params.size(); ++i) s += (i ? ",\n    " : "") + params[i];
  return s;
}

std::vector<PlanArg> GroupContext::plan_args() const {
  std::vector<PlanArg> args;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    args.push_back(PlanArg{fmt::format("input:{}", i), "", nullptr, ""});
  for (std::size_t k = 0; k < outputs.size(); ++k)
    args.push_back(PlanArg{fmt::format("output:{}", k), "", nullptr, ""});
  return args;
}

LaunchPlan GroupContext::base_plan() const {
  LaunchPlan plan;
  for (const auto& t : inputs) plan.inputs.push_back({t.name, t.shape, t.dtype});
  for (const auto& t : outputs) plan.outputs.push_back({t.name, t.shape, t.dtype});
  return plan;
}

void GroupContext::bind_inputs(PointwiseEmitter& emitter) const {
  for (std::size_t i = 0; i < inputs.size(); ++i) emitter.bind_memory(inputs[i].name, input_names[i]);
}

int GroupContext::input_index(const std::string& tensor) const {
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].name == tensor) return static_cast<int>(i);
  return -1;
}

PlanArg GroupContext::library_arg(const NodeArg& arg,
                                  const std::map<std::string, std::string>& computed) const {
  if (arg.tensor.empty()) return PlanArg{"", "json", arg.constant, ""};
  if (auto it = computed.find(arg.tensor); it != computed.end()) return PlanArg{it->second, "", nullptr, ""};
  int i = input_index(arg.tensor);
  if (i < 0)
    throw UnsupportedGroup("the anchor reads '" + arg.tensor + "', computed inside the group before it");
  return PlanArg{fmt::format("input:{}", i), "", nullptr, ""};
}

bool GroupContext::epilogue_preserves_coordinates() const { return dry_run_epilogue(true); }

bool GroupContext::epilogue_in_place() const { return dry_run_epilogue(false); }

bool GroupContext::dry_run_epilogue(bool same_coordinates) const {
  if (outputs.size() != 1 || !anchor()) return false;
  const TensorInfo& result = anchor()->outputs.at(0);
  if (result.shape != outputs[0].shape) return false;
  // A dry run of the epilogue with the anchor's result in a register: it must reach the output
  // without views or index-dependent ops in between (the emitter tracks exactly that).
  PointwiseEmitter e(graph, group);
  bind_inputs(e);
  auto coords = unravel("i", result.shape);
  e.bind_register(result.name, "anchor", coords);
  try {
    e.value(outputs[0].name, coords);
  } catch (const UnsupportedGroup&) {
    return false;
  }
  return same_coordinates ? e.coordinates_preserved() : e.reads_in_place();
}

std::string GroupContext::shapes_summary() const {
  std::string s;
  for (const auto& t : inputs)
    s += fmt::format("{}{} {}{}", s.empty() ? "" : ", ", t.name, t.dtype, shape_text(t.shape));
  s += " -> ";
  for (std::size_t k = 0; k < outputs.size(); ++k)
    s += fmt::format("{}{} {}{}", k ? ", " : "", outputs[k].name, outputs[k].dtype,
                     shape_text(outputs[k].shape));
  return s;
}

std::string GroupContext::ops_summary() const {
  std::string s;
  for (const GraphNode* n : nodes()) {
    if (n->op_class == OpClass::DataMovement && n->op == "clone") continue;
    s += (s.empty() ? "" : " -> ") + n->op;
  }
  return s;
}

}  // namespace nova
