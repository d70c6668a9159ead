#pragma once
// Emits CUDA statements that compute any value of a fusion group at given coordinates: the
// pointwise engine of the builtin generator. It follows elementwise ops (with broadcasting and
// constants folded into literals), views (reshape, transpose, permute, expand, slice, select,
// split), generated tensors (ones, full, triu masks) and masks back to the tensors read from memory
// (kernel parameters) or held in registers (an anchor's accumulator), and writes one float variable
// per distinct (value, coordinates) pair. All math is in fp32; storage types convert on load.
// Values are evaluated on an explicit work stack of node evaluations (NodeEvaluation), not by one
// native call per op, so a group's chain may be as long as memory allows.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/gen/node_evaluation.h"
#include "core/graph/model_graph.h"

namespace nova {

// Raised when a group holds something the builtin rules cannot express; the message says what.
class UnsupportedGroup : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class PointwiseEmitter {
 public:
  PointwiseEmitter(const ModelGraph& graph, const FusionGroup& group);

  // `tensor` is read from memory through `pointer` (contiguous, the tensor's own shape).
  void bind_memory(const std::string& tensor, const std::string& pointer);
  // Offsets into memory tensors use 32-bit arithmetic (int literals, no LL) when every tensor
  // the kernel touches has fewer than 2^31 elements; the caller vouches for that.
  void set_int32_offsets(bool on) { offset_suffix_ = on ? "" : "LL"; }
  // States that `coords` are the unravelled form of the flat index `flat` in `shape`: a memory
  // tensor of exactly that shape read at `coords` is then read at `flat`, with no index math.
  void note_flat(const std::vector<std::string>& coords, const std::vector<std::int64_t>& shape,
                 const std::string& flat);
  // `tensor` is the float expression `expr`, valid only at the coordinates `coords`.
  void bind_register(const std::string& tensor, const std::string& expr,
                     const std::vector<std::string>& coords);

  // A float expression (usually a variable) holding `tensor` at `coords` (one C expression of
  // type long long per dimension of the tensor). Emits the statements it needs; throws
  // UnsupportedGroup for ops it does not know.
  std::string value(const std::string& tensor, const std::vector<std::string>& coords);
  // The statements emitted since the last call, indented by `indent` spaces.
  std::string take_code(int indent);
  // States that `tensor` at `coords` is already held in `expr` (e.g. one lane of a 16-byte load).
  void preload(const std::string& tensor, const std::vector<std::string>& coords, const std::string& expr);
  // Reads memory tensor `tensor` for four lanes (coordinates in a result of `out_shape` that differ
  // only in the last dimension, which is a multiple of 4) with one 16-byte load. True also when one
  // scalar serves all lanes (broadcast along the last dimension); false where a 16-byte load does
  // not apply (then the caller reads lane by lane).
  bool load_lanes_float4(const std::string& tensor, const std::vector<std::int64_t>& out_shape,
                         const std::vector<std::vector<std::string>>& lanes);
  // Coordinates in `tensor` of the element that broadcasts to `coords` of a result of `out_shape`.
  std::vector<std::string> broadcast_coords(const std::string& tensor,
                                            const std::vector<std::int64_t>& out_shape,
                                            const std::vector<std::string>& coords) const;
  // False once a view or an index-dependent op (triu, ...) was followed: such values are not
  // a function of the same coordinates, so rules that substitute coordinates do not apply.
  bool coordinates_preserved() const { return !remapped_ && !index_dependent_; }
  // False once a view was followed: every read is then no longer of the element at the result's
  // own coordinates (broadcast aside). Index-dependent ops (triu, tril) keep this: their value is
  // computed from the coordinates each element is emitted with, so the pointwise rule's 16-byte
  // path, which emits every lane with its own coordinates, still applies.
  bool reads_in_place() const { return !remapped_; }
  // Emits raw statements (used by the rules for their own loops and loads).
  void emit_line(const std::string& line) { lines_.push_back(line); }

  const TensorInfo& info(const std::string& tensor) const;
  // The group nodes the values asked for so far went through, in graph order.
  std::set<int> visited_nodes() const { return visited_; }
  // Memory tensors read so far.
  const std::set<std::string>& memory_reads() const { return reads_; }
  // Memory tensors read with 16-byte loads so far (their pointers must be 16-byte aligned).
  const std::set<std::string>& float4_reads() const { return float4_reads_; }

  // C++ storage type for a dtype ("float32" -> "float").
  static std::string storage_type(const std::string& dtype);
  // A C float literal for a JSON constant ("inf", "-inf" and "nan" strings included).
  static std::string float_literal(const nlohmann::json& constant);

 private:
  struct Binding {
    bool in_register = false;
    std::string pointer_or_expr;
    std::vector<std::string> coords;
  };
  // A node evaluation waiting on the work stack of value(), and the memo key its result goes under.
  struct PendingNode {
    NodeEvaluation evaluation;
    std::string key;
  };
  // `tensor` at `coords` if it is known without evaluating a node (memoized, bound to memory or a
  // register); otherwise pushes the evaluation of its producer onto `stack` and returns nothing.
  std::optional<std::string> start(const std::string& tensor, const std::vector<std::string>& coords,
                                   std::vector<PendingNode>& stack);
  // The expression of output `output_index` of `node` at `coords`, as a coroutine that awaits its
  // operands (see NodeEvaluation).
  NodeEvaluation eval_node(const GraphNode& node, int output_index, std::vector<std::string> coords);
  NodeEvaluation::Operand operand(const GraphNode& node, const std::string& arg_name, int position,
                                  const std::vector<std::int64_t>& out_shape,
                                  const std::vector<std::string>& coords) const;
  NodeEvaluation::Operand broadcast_operand(const std::string& tensor,
                                            const std::vector<std::int64_t>& out_shape,
                                            const std::vector<std::string>& coords) const;
  std::string fresh(const std::string& expr);
  // The flat offset of `coords` in a contiguous tensor of `shape` (a noted flat index if any).
  std::string offset_of(const std::vector<std::string>& coords, const std::vector<std::int64_t>& shape) const;

  const ModelGraph& graph_;
  const FusionGroup& group_;
  std::set<int> members_;
  std::map<std::string, TensorInfo> tensors_;
  // tensor -> (the node that computes it, output index); a pointer, so no look-up by id per value
  std::map<std::string, std::pair<const GraphNode*, int>> producers_;
  std::map<std::string, Binding> bindings_;
  std::map<std::string, std::string> memo_;
  std::vector<std::string> lines_;
  std::set<int> visited_;
  std::set<std::string> reads_;
  std::set<std::string> float4_reads_;
  std::string offset_suffix_ = "LL";
  std::map<std::string, std::string> flats_;  // coordinates|shape -> flat index
  int counter_ = 0;
  bool remapped_ = false;         // a view was followed
  bool index_dependent_ = false;  // triu / tril: values computed from the coordinates
};

// Helpers shared by the rules.
const NodeArg* find_arg(const GraphNode& node, const std::string& name, int position = -1);
// The node's ATen op without its namespace: "mean.dim" for "aten.mean.dim".
std::string aten_op(const GraphNode& node);
// The dimensions a reduction (sum, mean, amax, ...) reduces, from its "dim" argument: non-negative,
// sorted, each once; all of them when none are named.
std::vector<std::int64_t> reduced_dims(const GraphNode& node, std::size_t rank);
std::int64_t numel(const std::vector<std::int64_t>& shape);
// Row-major strides of a tensor of `shape` laid out contiguously.
std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape);
// The row-major flat offset of `coords` in a contiguous tensor of `shape`, as a C expression.
// `suffix` goes on the integer literals: "LL" (64-bit math) or "" (int math, small tensors).
std::string ravel(const std::vector<std::string>& coords, const std::vector<std::int64_t>& shape,
                  const char* suffix = "LL");
// Coordinates of a flat row-major index `flat` (a C expression) in `shape`, as C expressions.
std::vector<std::string> unravel(const std::string& flat, const std::vector<std::int64_t>& shape,
                                 const char* suffix = "LL");

}  // namespace nova
