#include "core/graph/graph_view_model.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace nova {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// "a.b.c" -> {"a", "a.b", "a.b.c"}
std::vector<std::string> prefixes(const std::string& scope) {
  std::vector<std::string> out;
  if (scope.empty()) return out;
  for (std::size_t pos = scope.find('.'); pos != std::string::npos; pos = scope.find('.', pos + 1))
    out.push_back(scope.substr(0, pos));
  out.push_back(scope);
  return out;
}

std::string describe(const TensorInfo& t) {
  std::ostringstream s;
  s << '[';
  for (std::size_t i = 0; i < t.shape.size(); ++i) s << (i ? ", " : "") << t.shape[i];
  s << "] " << t.dtype;
  return s.str();
}

std::string short_type(const std::string& scope_type) {
  auto dot = scope_type.rfind('.');
  return dot == std::string::npos ? scope_type : scope_type.substr(dot + 1);
}

}  // namespace

GraphViewModel::GraphViewModel(const ModelGraph& graph) : graph_(&graph) {
  for (const auto& n : graph.nodes)
    for (const auto& p : prefixes(n.scope)) ++member_counts_[p];
  for (const auto& [scope, count] : member_counts_) scopes_.push_back(scope);
  rebuild();
}

int GraphViewModel::member_count(const std::string& scope) const {
  auto it = member_counts_.find(scope);
  return it == member_counts_.end() ? 0 : it->second;
}

int GraphViewModel::depth(const std::string& scope) {
  if (scope.empty()) return 0;
  return 1 + static_cast<int>(std::count(scope.begin(), scope.end(), '.'));
}

bool GraphViewModel::contains(const std::string& scope, const std::string& node_scope) {
  if (scope.empty()) return true;
  return node_scope.size() >= scope.size() && node_scope.compare(0, scope.size(), scope) == 0 &&
         (node_scope.size() == scope.size() || node_scope[scope.size()] == '.');
}

void GraphViewModel::collapse(const std::string& scope) {
  if (member_counts_.count(scope) && collapsed_.insert(scope).second) rebuild();
}

void GraphViewModel::expand(const std::string& scope) {
  if (collapsed_.erase(scope)) rebuild();
}

void GraphViewModel::expand_all() {
  collapsed_.clear();
  rebuild();
}

void GraphViewModel::collapse_at_depth(int d) {
  collapsed_.clear();
  // A scope of one op would only trade the op's name for the module's.
  for (const auto& s : scopes_)
    if (depth(s) == d && member_count(s) > 1) collapsed_.insert(s);
  rebuild();
}

int GraphViewModel::count_visible_if_collapsed_at(int d) const {
  std::set<std::string> scopes;
  int singles = 0;
  for (const auto& n : graph_->nodes) {
    if (depth(n.scope) >= d)
      scopes.insert(prefixes(n.scope)[d - 1]);
    else
      ++singles;
  }
  return singles + static_cast<int>(scopes.size() + graph_->inputs.size() + graph_->outputs.size());
}

int GraphViewModel::apply_default_collapse(int max_visible) {
  int total = static_cast<int>(graph_->nodes.size() + graph_->inputs.size() + graph_->outputs.size());
  if (total <= max_visible) {
    expand_all();
    return 0;
  }
  int deepest = 0;
  for (const auto& s : scopes_) deepest = std::max(deepest, depth(s));
  for (int d = deepest; d >= 1; --d) {
    if (count_visible_if_collapsed_at(d) <= max_visible) {
      collapse_at_depth(d);
      return d;
    }
  }
  if (deepest == 0) return 0;
  collapse_at_depth(1);
  return 1;
}

std::string GraphViewModel::state_key() const {
  std::string key;
  for (const auto& s : collapsed_) key += s + '\n';
  return key;
}

std::string GraphViewModel::collapsed_ancestor(int node_id) const {
  const GraphNode* n = graph_->node(node_id);
  return n ? outermost_collapsed(n->scope) : std::string();
}

std::string GraphViewModel::outermost_collapsed(const std::string& node_scope) const {
  if (collapsed_.empty()) return {};
  for (const auto& p : prefixes(node_scope))
    if (collapsed_.count(p)) return p;
  return {};
}

bool GraphViewModel::reveal(int node_id) {
  const GraphNode* n = graph_->node(node_id);
  if (!n) return false;
  bool changed = false;
  for (const auto& p : prefixes(n->scope)) changed |= collapsed_.erase(p) > 0;
  if (changed) rebuild();
  return changed;
}

void GraphViewModel::rebuild() {
  items_.clear();
  edges_.clear();
  item_of_node_.clear();
  item_of_scope_.clear();
  std::map<std::string, int> item_of_tensor;

  for (const auto& in : graph_->inputs) {
    Item item;
    item.kind = Item::Kind::Input;
    item.tensor = in.name;
    item.label = in.name;
    item.detail = describe(in);
    item_of_tensor[in.name] = static_cast<int>(items_.size());
    items_.push_back(std::move(item));
  }

  std::map<std::string, double> dominant_flops;  // per collapsed scope, flops of its op_class choice
  for (const auto& n : graph_->nodes) {
    std::string scope = outermost_collapsed(n.scope);
    int index;
    if (scope.empty()) {
      Item item;
      item.kind = Item::Kind::Node;
      item.node_id = n.id;
      item.label = n.op;
      item.detail = n.outputs.empty() ? std::string() : describe(n.outputs.front());
      item.op_class = n.op_class;
      index = static_cast<int>(items_.size());
      items_.push_back(std::move(item));
    } else if (auto it = item_of_scope_.find(scope); it != item_of_scope_.end()) {
      index = it->second;
    } else {
      Item item;
      item.kind = Item::Kind::Scope;
      item.scope = scope;
      item.member_count = member_count(scope);
      item.label = scope;
      index = static_cast<int>(items_.size());
      item_of_scope_[scope] = index;
      items_.push_back(std::move(item));
    }
    item_of_node_[n.id] = index;
    Item& item = items_[index];
    if (item.kind == Item::Kind::Scope) {
      if (n.scope == scope && item.detail.empty() && !n.scope_type.empty())
        item.detail = short_type(n.scope_type);
      // A collapsed scope takes the colour of the class doing most of its arithmetic.
      double& best = dominant_flops[scope];
      if (n.flops > best || (best == 0 && item.op_class == OpClass::Other)) {
        best = n.flops;
        item.op_class = n.op_class;
      }
    }
    for (const auto& out : n.outputs) item_of_tensor[out.name] = index;
  }
  for (auto& [scope, index] : item_of_scope_) {
    Item& item = items_[index];
    std::string count = std::to_string(item.member_count) + " ops";
    item.detail = item.detail.empty() ? count : item.detail + " \xC2\xB7 " + count;
  }

  std::map<std::pair<int, int>, int> edge_index;
  auto connect = [&](int from, int to, const std::string& tensor) {
    if (from == to) return;
    auto [it, added] = edge_index.try_emplace({from, to}, static_cast<int>(edges_.size()));
    if (added) edges_.push_back(Edge{from, to, {}});
    auto& tensors = edges_[it->second].tensors;
    if (std::find(tensors.begin(), tensors.end(), tensor) == tensors.end()) tensors.push_back(tensor);
  };
  for (const auto& n : graph_->nodes) {
    int to = item_of_node_[n.id];
    for (const auto& a : n.args) {
      if (a.tensor.empty()) continue;
      // Parameters and buffers are not items; the detail panel lists them as arguments.
      if (auto it = item_of_tensor.find(a.tensor); it != item_of_tensor.end())
        connect(it->second, to, a.tensor);
    }
  }
  for (const auto& out : graph_->outputs) {
    Item item;
    item.kind = Item::Kind::Output;
    item.tensor = out.name;
    item.label = "output";
    item.detail = describe(out);
    int index = static_cast<int>(items_.size());
    items_.push_back(std::move(item));
    if (auto it = item_of_tensor.find(out.name); it != item_of_tensor.end())
      connect(it->second, index, out.name);
  }
}

std::vector<GraphViewModel::Group> GraphViewModel::groups() const {
  std::vector<Group> out;
  for (const auto& g : graph_->groups) {
    Group group{g.id, "group " + std::to_string(g.id) + ": " + g.kind, {}};
    bool all_visible = !g.nodes.empty();
    for (int id : g.nodes) {
      int index = item_of_node(id);
      if (index < 0 || items_[index].kind != Item::Kind::Node) {
        all_visible = false;
        break;
      }
      group.items.push_back(index);
    }
    if (all_visible) out.push_back(std::move(group));
  }
  return out;
}

int GraphViewModel::item_of_node(int node_id) const {
  auto it = item_of_node_.find(node_id);
  return it == item_of_node_.end() ? -1 : it->second;
}

int GraphViewModel::item_of_scope(const std::string& scope) const {
  auto it = item_of_scope_.find(scope);
  return it == item_of_scope_.end() ? -1 : it->second;
}

std::vector<int> GraphViewModel::nodes_in(const std::string& scope) const {
  std::vector<int> out;
  for (const auto& n : graph_->nodes)
    if (contains(scope, n.scope)) out.push_back(n.id);
  return out;
}

std::vector<int> GraphViewModel::search(const std::string& query) const {
  std::vector<int> out;
  std::string q = lower(query);
  if (q.empty()) return out;
  auto has = [&](const std::string& s) { return lower(s).find(q) != std::string::npos; };
  for (const auto& n : graph_->nodes) {
    bool hit = has(n.op) || has(n.target) || has(n.scope);
    for (std::size_t i = 0; !hit && i < n.outputs.size(); ++i) hit = has(n.outputs[i].name);
    if (hit) out.push_back(n.id);
  }
  return out;
}

}  // namespace nova
