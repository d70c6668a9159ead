#pragma once
// The model graph: what intake captures from a client's PyTorch model and every later stage reads
// (graph view, profiler attribution, fusion groups for the generators, validation). Plain value
// types with a JSON round-trip (to_json/from_json below); no behaviour beyond simple look-ups.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nova {

// One tensor value flowing along an edge (or a graph input/output).
struct TensorInfo {
  std::string name;  // the value's name in the captured graph, e.g. "conv2d"
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;
  std::string dtype;  // "float32", "float16", "bfloat16", "int64", ...
  bool operator==(const TensorInfo&) const = default;
};

// An argument of a node: a tensor produced elsewhere, or a constant.
struct NodeArg {
  std::string name;         // the schema's argument name ("input", "weight", "other", ...)
  std::string tensor;       // the value name if the argument is a tensor, else empty
  nlohmann::json constant;  // the constant's value otherwise (number, list, string, null)
  bool operator==(const NodeArg&) const = default;
};

// Op classes drive colouring, cost models and fusion.
enum class OpClass { Convolution, Matmul, Elementwise, Reduction, Normalization, DataMovement, Other };
std::string to_string(OpClass c);
OpClass op_class_from_string(const std::string& s);

struct GraphNode {
  int id = 0;
  std::string target;  // ATen target, e.g. "aten.convolution.default"
  std::string op;      // readable name, e.g. "convolution"
  OpClass op_class = OpClass::Other;
  std::vector<NodeArg> args;
  std::vector<TensorInfo> outputs;
  std::string scope;       // nn.Module path, e.g. "blocks.0.attn"; empty at the top
  std::string scope_type;  // e.g. "torch.nn.modules.linear.Linear"
  std::string file;        // the user's source file and line that created the node
  int line = 0;
  std::string source_text;  // that line's text
  double flops = 0;         // estimated floating-point operations
  double bytes = 0;         // estimated bytes read + written (each input once, each output once)
  bool operator==(const GraphNode&) const = default;
};

// A parameter or buffer of the model, by name.
struct ParamInfo {
  std::string name;         // e.g. "conv_weight", "blocks.0.ln.weight"
  std::string graph_input;  // the graph input it feeds
  TensorInfo tensor;
  bool is_buffer = false;
  bool operator==(const ParamInfo&) const = default;
};

// A group of nodes one kernel (or one library call plus one kernel) can replace.
struct FusionGroup {
  int id = 0;
  std::string kind;                  // "conv+epilogue", "gemm+epilogue", "reduction", "norm", "elementwise"
  std::optional<int> anchor;         // node id of the anchor, if any
  std::vector<int> nodes;            // node ids in execution order
  std::vector<std::string> inputs;   // tensor names read from outside the group, in call order
  std::vector<std::string> outputs;  // tensor names the rest of the graph (or the model) uses
  double flops = 0, bytes = 0;       // bytes counted at the group boundary (fused)
  std::string functional_source;     // standalone PyTorch: module_fn + get_inputs() for this group
  bool operator==(const FusionGroup&) const = default;
};

struct ModelGraph {
  std::string model_path;                     // the model file as given
  std::string model_form;                     // "kernelbench" or "functional"
  std::string capture_route;                  // "torch.export" or a fallback's name
  std::vector<std::string> warnings;          // e.g. value-dependent control flow at file:line
  std::vector<TensorInfo> inputs;             // user inputs (from get_inputs()), in order
  std::vector<nlohmann::json> scalar_inputs;  // non-tensor get_inputs() values, with their position
  std::vector<TensorInfo> outputs;
  std::vector<ParamInfo> params;
  std::vector<GraphNode> nodes;  // topological order
  std::vector<FusionGroup> groups;
  std::string saved_inputs;  // safetensors file with example inputs and parameters
  std::string torch_version;
  bool operator==(const ModelGraph&) const = default;

  const GraphNode* node(int id) const;
  const FusionGroup* group_of(int node_id) const;
  // The node that produced a tensor value, or nullptr for graph inputs and parameters.
  const GraphNode* producer(const std::string& tensor) const;
};

void to_json(nlohmann::json& j, const TensorInfo& t);
void from_json(const nlohmann::json& j, TensorInfo& t);
void to_json(nlohmann::json& j, const NodeArg& a);
void from_json(const nlohmann::json& j, NodeArg& a);
void to_json(nlohmann::json& j, const GraphNode& n);
void from_json(const nlohmann::json& j, GraphNode& n);
void to_json(nlohmann::json& j, const ParamInfo& p);
void from_json(const nlohmann::json& j, ParamInfo& p);
void to_json(nlohmann::json& j, const FusionGroup& g);
void from_json(const nlohmann::json& j, FusionGroup& g);
void to_json(nlohmann::json& j, const ModelGraph& g);
void from_json(const nlohmann::json& j, ModelGraph& g);

}  // namespace nova
