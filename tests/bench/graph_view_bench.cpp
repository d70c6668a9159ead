// Benchmark of the model graph view (not a test): Graphviz layout time and first-paint time of
// generated transformer graphs on the offscreen platform, median of several runs.
//   nova_graph_bench [runs=5]
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/graph/graph_view_model.h"
#include "core/graph/synthetic_model_graph.h"
#include "ui/graph/graph_layout_engine.h"
#include "ui/graph/graph_scene_builder.h"
#include "ui/graph/graph_view.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// From setGraph (or an expand) to the laid-out scene painted into a pixmap of the viewport.
double first_paint_ms(nova::ui::GraphView& view, const std::function<void()>& start) {
  QElapsedTimer t;
  t.start();
  QEventLoop loop;
  auto c = QObject::connect(&view, &nova::ui::GraphView::layoutReady, &loop, &QEventLoop::quit);
  start();
  if (view.layoutPending()) loop.exec();
  QObject::disconnect(c);
  QPixmap shot = view.viewport()->grab();
  return shot.isNull() ? -1 : t.nsecsElapsed() / 1e6;
}

void measure(const char* name, int nodes, bool expanded, int runs) {
  nova::ModelGraph graph = nova::make_transformer_graph(nodes);
  std::vector<double> layout, paint;
  std::size_t items = 0;
  for (int r = 0; r < runs; ++r) {
    nova::GraphViewModel model(graph);
    if (expanded)
      model.expand_all();
    else
      model.apply_default_collapse(300);
    items = model.items().size();
    layout.push_back(
        nova::ui::GraphLayoutEngine().layout(nova::ui::GraphSceneBuilder::request(model)).millis);

    nova::ui::GraphView view;
    view.resize(1400, 900);
    view.show();
    paint.push_back(first_paint_ms(view, [&] { view.setGraph(graph, expanded ? nodes + 10 : 300); }));
  }
  std::printf("%-34s nodes %5d  visible boxes %5zu  layout median %8.1f ms  first paint median %8.1f ms\n",
              name, nodes, items, median(layout), median(paint));
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::printf("graph view benchmark, %d runs each\n", runs);
  measure("2000 nodes, collapsed (default)", 2000, false, runs);
  measure("2000 nodes, fully expanded", 2000, true, runs);
  measure("5000 nodes, collapsed (default)", 5000, false, runs);
  return 0;
}
