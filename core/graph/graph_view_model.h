#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/graph/model_graph.h"

namespace nova {

// What the graph view shows of a ModelGraph: nn.Module scopes can be collapsed into one item, edges
// between collapsed scopes are aggregated, and search runs over the whole graph (not only what is
// visible). Qt-free, so the view, the CLI and the tests share it. The graph must outlive the model.
class GraphViewModel {
 public:
  // One box in the visible graph.
  struct Item {
    enum class Kind { Node, Scope, Input, Output };
    Kind kind = Kind::Node;
    int node_id = -1;      // Kind::Node
    std::string scope;     // Kind::Scope: the collapsed nn.Module path
    std::string tensor;    // Kind::Input / Kind::Output: the value's name
    int member_count = 0;  // Kind::Scope: nodes inside
    std::string label;     // first line: op name, scope path or value name
    std::string detail;    // second line: output shape and dtype, module type and op count
    OpClass op_class = OpClass::Other;
  };
  // An edge between visible items; `tensors` lists every value it stands for (several when it
  // joins collapsed scopes).
  struct Edge {
    int from = 0, to = 0;
    std::vector<std::string> tensors;
  };
  // A fusion group whose nodes are all visible, with the items to outline.
  struct Group {
    int group_id = 0;
    std::string label;  // "group 3: conv+epilogue"
    std::vector<int> items;
  };

  explicit GraphViewModel(const ModelGraph& graph);

  const ModelGraph& graph() const { return *graph_; }

  // Every nn.Module path holding at least one node, parents included, sorted.
  const std::vector<std::string>& scopes() const { return scopes_; }
  int member_count(const std::string& scope) const;
  static int depth(const std::string& scope);  // "a" -> 1, "a.b" -> 2, "" -> 0
  static bool contains(const std::string& scope, const std::string& node_scope);

  void collapse(const std::string& scope);
  void expand(const std::string& scope);
  bool is_collapsed(const std::string& scope) const { return collapsed_.count(scope) > 0; }
  void expand_all();
  // Collapses every scope of more than one op at `depth` (and only those).
  void collapse_at_depth(int depth);
  // Collapses the deepest scope level that leaves at most `max_visible` items, or the top level if
  // none does; expands everything when the whole graph fits. Returns the depth used (0: none).
  int apply_default_collapse(int max_visible = 300);
  // Identifies the collapse state, for caching layouts.
  std::string state_key() const;

  // Expands the collapsed scopes around a node so it becomes its own item; returns whether any was.
  bool reveal(int node_id);
  // The outermost collapsed scope holding the node, or empty when the node is visible.
  std::string collapsed_ancestor(int node_id) const;

  const std::vector<Item>& items() const { return items_; }
  const std::vector<Edge>& edges() const { return edges_; }
  std::vector<Group> groups() const;
  // The index of the item that shows a node (itself or its collapsed scope), -1 if unknown.
  int item_of_node(int node_id) const;
  int item_of_scope(const std::string& scope) const;
  // Node ids inside a scope, in topological order.
  std::vector<int> nodes_in(const std::string& scope) const;

  // Node ids whose op, target, output value name or scope contains `query` (case-insensitive), in
  // topological order. Runs over the whole graph, collapsed scopes included.
  std::vector<int> search(const std::string& query) const;

 private:
  void rebuild();
  std::string outermost_collapsed(const std::string& node_scope) const;
  int count_visible_if_collapsed_at(int depth) const;

  const ModelGraph* graph_;
  std::vector<std::string> scopes_;
  std::map<std::string, int> member_counts_;
  std::set<std::string> collapsed_;
  std::vector<Item> items_;
  std::vector<Edge> edges_;
  std::map<int, int> item_of_node_;
  std::map<std::string, int> item_of_scope_;
};

}  // namespace nova
