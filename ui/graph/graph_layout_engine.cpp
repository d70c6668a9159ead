#include "ui/graph/graph_layout_engine.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>

namespace nova::ui {
namespace {

std::mutex& graphviz_mutex() {
  static std::mutex m;
  return m;
}

// One context for the program: creating it loads the plugin configuration (milliseconds).
GVC_t* context() {
  static GVC_t* gvc = gvContext();
  return gvc;
}

char* c(const char* s) { return const_cast<char*>(s); }

}  // namespace

GraphLayout GraphLayoutEngine::layout(const LayoutRequest& request) const {
  auto start = std::chrono::steady_clock::now();
  GraphLayout out;
  const int n = static_cast<int>(request.sizes.size());
  out.nodes.resize(n);
  out.edges.resize(request.edges.size());
  if (n == 0) return out;

  std::lock_guard lock(graphviz_mutex());
  GVC_t* gvc = context();
  if (!gvc) throw std::runtime_error("Graphviz: no context");
  Agraph_t* g = agopen(c("g"), Agdirected, nullptr);
  agattr(g, AGRAPH, c("rankdir"), c("TB"));
  agattr(g, AGRAPH, c("nodesep"), c(std::to_string(options_.node_sep / 72.0).c_str()));
  agattr(g, AGRAPH, c("ranksep"), c(std::to_string(options_.rank_sep / 72.0).c_str()));
  if (n >= options_.bounded_above) {
    // dot's network simplex and mincross grow fast on thousands of nodes; bound both.
    agattr(g, AGRAPH, c("mclimit"), c(std::to_string(options_.mclimit).c_str()));
    agattr(g, AGRAPH, c("nslimit"), c(std::to_string(options_.nslimit).c_str()));
    agattr(g, AGRAPH, c("nslimit1"), c(std::to_string(options_.nslimit).c_str()));
    agattr(g, AGRAPH, c("searchsize"), c(std::to_string(options_.searchsize).c_str()));
  }
  agattr(g, AGNODE, c("shape"), c("box"));
  agattr(g, AGNODE, c("fixedsize"), c("true"));
  agattr(g, AGNODE, c("label"), c(""));
  Agsym_t* width = agattr(g, AGNODE, c("width"), c("1"));
  Agsym_t* height = agattr(g, AGNODE, c("height"), c("0.5"));
  agattr(g, AGEDGE, c("arrowsize"), c("0.6"));

  std::vector<Agnode_t*> nodes(n);
  for (int i = 0; i < n; ++i) {
    nodes[i] = agnode(g, c(std::to_string(i).c_str()), 1);
    agxset(nodes[i], width, c(std::to_string(request.sizes[i].first / 72.0).c_str()));
    agxset(nodes[i], height, c(std::to_string(request.sizes[i].second / 72.0).c_str()));
  }
  std::vector<Agedge_t*> edges(request.edges.size(), nullptr);
  for (std::size_t i = 0; i < request.edges.size(); ++i) {
    auto [from, to] = request.edges[i];
    if (from < 0 || to < 0 || from >= n || to >= n) continue;
    edges[i] = agedge(g, nodes[from], nodes[to], nullptr, 1);
  }

  if (gvLayout(gvc, g, "dot") != 0) {
    agclose(g);
    throw std::runtime_error("Graphviz dot layout failed");
  }
  const boxf bb = GD_bb(g);
  auto flip = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y}; };
  out.width = bb.UR.x - bb.LL.x;
  out.height = bb.UR.y - bb.LL.y;
  for (int i = 0; i < n; ++i) {
    LayoutPoint p = flip(ND_coord(nodes[i]));
    out.nodes[i] = LayoutNode{p.x, p.y, ND_width(nodes[i]) * 72.0, ND_height(nodes[i]) * 72.0};
  }
  for (std::size_t i = 0; i < edges.size(); ++i) {
    LayoutEdge& e = out.edges[i];
    std::tie(e.from, e.to) = request.edges[i];
    if (!edges[i] || !ED_spl(edges[i]) || ED_spl(edges[i])->size == 0) continue;
    const bezier& bz = ED_spl(edges[i])->list[0];
    for (int k = 0; k < bz.size; ++k) e.points.push_back(flip(bz.list[k]));
    if (bz.eflag) {
      e.has_arrow = true;
      e.arrow_tip = flip(bz.ep);
    }
  }
  gvFreeLayout(gvc, g);
  agclose(g);
  out.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace nova::ui
