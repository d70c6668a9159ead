// GraphViewModel: visible items with collapsed and expanded scopes, aggregated edges, fusion
// groups, search over the whole graph, and the synthetic graphs the view is measured on.
#include "core/graph/graph_view_model.h"

#include <gtest/gtest.h>

#include <set>

#include "core/graph/synthetic_model_graph.h"

namespace nova {
namespace {

using Kind = GraphViewModel::Item::Kind;

// x -> a (s.p) -> b (s.p) -> c (s.q) -> d (top) ; a also feeds d.
ModelGraph small_scoped_graph() {
  ModelGraph g;
  g.inputs.push_back(TensorInfo{"x", {4}, {1}, "float32"});
  auto node = [&](int id, std::string op, std::string scope, std::vector<std::string> in) {
    GraphNode n;
    n.id = id;
    n.op = op;
    n.target = "aten." + op + ".default";
    n.scope = scope;
    for (auto& t : in) n.args.push_back(NodeArg{"self", t, nullptr});
    n.outputs.push_back(TensorInfo{op, {4}, {1}, "float32"});
    g.nodes.push_back(n);
  };
  node(0, "relu", "s.p", {"x"});
  node(1, "exp", "s.p", {"relu"});
  node(2, "tanh", "s.q", {"exp", "relu"});
  node(3, "add", "", {"tanh", "relu"});
  g.outputs.push_back(g.nodes.back().outputs.front());
  g.groups.push_back(FusionGroup{0, "elementwise", 0, {0, 1}, {"x"}, {"exp"}, 0, 0, {}});
  return g;
}

TEST(GraphViewModel, ExpandedShowsEveryNodeWithInputAndOutput) {
  ModelGraph g = small_scoped_graph();
  GraphViewModel m(g);
  ASSERT_EQ(m.items().size(), 6u);  // x, 4 nodes, output
  EXPECT_EQ(m.items().front().kind, Kind::Input);
  EXPECT_EQ(m.items().back().kind, Kind::Output);
  EXPECT_EQ(m.scopes(), (std::vector<std::string>{"s", "s.p", "s.q"}));
  EXPECT_EQ(m.member_count("s"), 3);
  // x->relu, relu->exp, exp->tanh, relu->tanh, tanh->add, relu->add, add->output
  EXPECT_EQ(m.edges().size(), 7u);
  EXPECT_EQ(m.items()[m.item_of_node(0)].detail, "[4] float32");
  ASSERT_EQ(m.groups().size(), 1u);
  EXPECT_EQ(m.groups()[0].label, "group 0: elementwise");
}

TEST(GraphViewModel, CollapsedScopeIsOneItemAndEdgesAggregate) {
  ModelGraph g = small_scoped_graph();
  GraphViewModel m(g);
  m.collapse("s");
  ASSERT_EQ(m.items().size(), 4u);  // x, [s], add, output
  int s = m.item_of_scope("s");
  ASSERT_GE(s, 0);
  EXPECT_EQ(m.items()[s].kind, Kind::Scope);
  EXPECT_EQ(m.items()[s].member_count, 3);
  EXPECT_EQ(m.items()[s].detail, "3 ops");
  for (int id : {0, 1, 2}) EXPECT_EQ(m.item_of_node(id), s);
  EXPECT_EQ(m.collapsed_ancestor(1), "s");
  EXPECT_EQ(m.collapsed_ancestor(3), "");
  // s -> add carries both tanh and relu; internal edges disappear.
  int add = m.item_of_node(3);
  const GraphViewModel::Edge* agg = nullptr;
  for (const auto& e : m.edges()) {
    EXPECT_NE(e.from, e.to);
    if (e.from == s && e.to == add) agg = &e;
  }
  ASSERT_NE(agg, nullptr);
  EXPECT_EQ(std::set<std::string>(agg->tensors.begin(), agg->tensors.end()),
            (std::set<std::string>{"tanh", "relu"}));
  EXPECT_EQ(m.edges().size(), 3u);  // x->s, s->add, add->output
  // The group's nodes are hidden inside s: no outline.
  EXPECT_TRUE(m.groups().empty());
}

TEST(GraphViewModel, NestedCollapseOutermostWinsAndRevealExpandsAncestors) {
  ModelGraph g = small_scoped_graph();
  GraphViewModel m(g);
  m.collapse("s.p");
  EXPECT_EQ(m.items().size(), 5u);  // x, [s.p], tanh, add, output
  EXPECT_EQ(m.items()[m.item_of_scope("s.p")].member_count, 2);
  m.collapse("s");
  EXPECT_EQ(m.item_of_scope("s.p"), -1);
  EXPECT_EQ(m.collapsed_ancestor(0), "s");
  std::string before = m.state_key();
  EXPECT_TRUE(m.reveal(0));
  EXPECT_FALSE(m.is_collapsed("s"));
  EXPECT_FALSE(m.is_collapsed("s.p"));
  EXPECT_NE(m.state_key(), before);
  EXPECT_EQ(m.items()[m.item_of_node(0)].kind, Kind::Node);
  EXPECT_FALSE(m.reveal(0));
}

TEST(GraphViewModel, SearchCoversCollapsedScopesCaseInsensitively) {
  ModelGraph g = small_scoped_graph();
  GraphViewModel m(g);
  m.collapse("s");
  EXPECT_EQ(m.search("EXP"), std::vector<int>{1});
  EXPECT_EQ(m.search("s.q"), std::vector<int>{2});
  EXPECT_EQ(m.search("aten."), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(m.search("conv").empty());
  EXPECT_TRUE(m.search("").empty());
}

TEST(GraphViewModel, ContainsMatchesWholePathSegments) {
  EXPECT_TRUE(GraphViewModel::contains("layers.1", "layers.1.attn"));
  EXPECT_TRUE(GraphViewModel::contains("layers.1", "layers.1"));
  EXPECT_FALSE(GraphViewModel::contains("layers.1", "layers.10.attn"));
  EXPECT_EQ(GraphViewModel::depth("layers.1.attn"), 3);
}

TEST(GraphViewModel, SeedDemoGraphHasOneChainAndItsGroup) {
  ModelGraph g = make_seed_demo_graph();
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[0].op, "convolution");
  EXPECT_EQ(g.nodes[3].op, "mul");
  GraphViewModel m(g);
  EXPECT_EQ(m.apply_default_collapse(), 0);
  EXPECT_EQ(m.items().size(), 6u);
  EXPECT_EQ(m.edges().size(), 5u);  // weights and biases are parameters, not boxes
  ASSERT_EQ(m.groups().size(), 1u);
  EXPECT_EQ(m.groups()[0].items.size(), 4u);
  EXPECT_EQ(m.groups()[0].label, "group 0: conv+epilogue");
}

TEST(GraphViewModel, GeneratedTransformerHasExactSizeValidEdgesAndNestedScopes) {
  ModelGraph g = make_transformer_graph(2000);
  ASSERT_EQ(g.nodes.size(), 2000u);
  std::set<std::string> known;
  for (const auto& in : g.inputs) known.insert(in.name);
  for (const auto& p : g.params) known.insert(p.graph_input);
  for (const auto& n : g.nodes) {
    for (const auto& a : n.args)
      if (!a.tensor.empty()) EXPECT_TRUE(known.count(a.tensor)) << n.op << " " << a.tensor;  // topological
    for (const auto& o : n.outputs) known.insert(o.name);
  }
  EXPECT_TRUE(nlohmann::json(g).get<ModelGraph>() == g);
  GraphViewModel m(g);
  EXPECT_EQ(m.member_count("layers.0"), 43);
  EXPECT_EQ(m.member_count("layers.0.attn"), 30);
  EXPECT_GT(m.groups().size(), 40u);
}

TEST(GraphViewModel, DefaultCollapseKeepsLargeGraphsUnderTheLimit) {
  for (int size : {2000, 5000}) {
    ModelGraph g = make_transformer_graph(size);
    GraphViewModel m(g);
    int depth = m.apply_default_collapse(300);
    EXPECT_GE(depth, 1) << size;
    EXPECT_LE(m.items().size(), 300u) << size;
    EXPECT_GT(m.items().size(), 40u) << size;  // an overview, not one box
    // Every edge joins distinct items; every node maps to an item.
    for (const auto& e : m.edges()) EXPECT_NE(e.from, e.to);
    for (const auto& n : g.nodes) EXPECT_GE(m.item_of_node(n.id), 0);
  }
  ModelGraph small = make_transformer_graph(200);
  GraphViewModel m(small);
  EXPECT_EQ(m.apply_default_collapse(300), 0);
  EXPECT_EQ(m.items().size(), 202u);
}

}  // namespace
}  // namespace nova
