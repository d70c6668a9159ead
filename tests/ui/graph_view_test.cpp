// The model graph view on the offscreen platform: dot layouts (layered, non-overlapping), the seed
// demo graph with its fusion group, selection and the detail panel's source link, search, and the
// generated 2,000-node transformer collapsed, expanded, revealed and heat-coloured. Screenshots go
// to the test output folder.
#include <gtest/gtest.h>
#include <QApplication>
#include <QLabel>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>

#include <filesystem>

#include "core/graph/synthetic_model_graph.h"
#include "support/test_paths.h"
#include "ui/graph/graph_layout_engine.h"
#include "ui/graph/graph_scene_builder.h"
#include "ui/graph/group_outline_item.h"
#include "ui/graph/model_graph_widget.h"
#include "ui/graph/node_item.h"

namespace nova::ui {
namespace {

void save(QWidget& w, const char* name) {
  std::filesystem::create_directories(nova::test::test_output_dir());
  QPixmap shot = w.grab();
  ASSERT_FALSE(shot.isNull());
  EXPECT_TRUE(shot.save(QString::fromStdString((nova::test::test_output_dir() / name).string())));
}

bool waitForLayout(GraphView* view) {
  if (!view->layoutPending()) return true;
  QSignalSpy ready(view, &GraphView::layoutReady);
  return ready.wait(20000);
}

void expectLayered(const GraphLayout& layout) {
  for (std::size_t i = 0; i < layout.nodes.size(); ++i)
    for (std::size_t j = i + 1; j < layout.nodes.size(); ++j) {
      const auto &a = layout.nodes[i], &b = layout.nodes[j];
      bool apart = std::abs(a.x - b.x) >= (a.width + b.width) / 2 - 0.5 ||
                   std::abs(a.y - b.y) >= (a.height + b.height) / 2 - 0.5;
      ASSERT_TRUE(apart) << "boxes " << i << " and " << j << " overlap";
    }
  for (const auto& e : layout.edges) {
    EXPECT_LT(layout.nodes[e.from].y, layout.nodes[e.to].y) << e.from << "->" << e.to;
    ASSERT_GE(e.points.size(), 4u);
    EXPECT_TRUE(e.has_arrow);
  }
}

TEST(GraphLayoutEngine, SeedGraphIsOneDownwardColumn) {
  ModelGraph g = make_seed_demo_graph();
  GraphViewModel m(g);
  GraphLayout layout = GraphLayoutEngine().layout(GraphSceneBuilder::request(m));
  ASSERT_EQ(layout.nodes.size(), 6u);
  expectLayered(layout);
  EXPECT_GT(layout.height, layout.width);
}

TEST(GraphLayoutEngine, ExpandedTransformerIsLayeredWithoutOverlaps) {
  ModelGraph g = make_transformer_graph(200);
  GraphViewModel m(g);
  LayoutRequest request = GraphSceneBuilder::request(m);
  GraphLayout layout = GraphLayoutEngine().layout(request);
  ASSERT_EQ(layout.nodes.size(), 202u);
  ASSERT_EQ(layout.edges.size(), m.edges().size());
  for (std::size_t i = 0; i < layout.nodes.size(); ++i) {
    EXPECT_NEAR(layout.nodes[i].width, request.sizes[i].first, 1.0);
    EXPECT_NEAR(layout.nodes[i].height, request.sizes[i].second, 1.0);
    EXPECT_GE(layout.nodes[i].x - layout.nodes[i].width / 2, -0.5);
    EXPECT_LE(layout.nodes[i].y + layout.nodes[i].height / 2, layout.height + 0.5);
  }
  expectLayered(layout);
}

TEST(GroupOutlineItem, FollowsItsNodesSoAnotherGroupInsideItsBoundingBoxIsNotEnclosed) {
  // Group A runs diagonally (top left, then bottom right); group B's one node sits at the top right,
  // inside A's bounding box but in neither of A's nodes nor between them.
  const QRectF a1(0, 0, 100, 30), a2(300, 200, 100, 30), b(300, 0, 100, 30);
  GroupOutlineItem a({a1, a2}, "group 0: gemm+epilogue");
  GroupOutlineItem other({b}, "group 1: elementwise");
  EXPECT_TRUE(a.outline().contains(b));  // the bounding box would have drawn B as nested in A
  EXPECT_FALSE(a.path().intersects(b));
  EXPECT_FALSE(a.path().intersects(other.path()));
  EXPECT_TRUE(a.path().contains(a1) && a.path().contains(a2));
  EXPECT_TRUE(a.path().contains(QPointF(200, 115)));  // joined along the execution order
  EXPECT_TRUE(other.path().contains(b));
}

TEST(GraphView, TheDefaultZoomKeepsTheModelFittedAsTheViewGetsItsSizeUntilTheUserZooms) {
  GraphView view;
  view.resize(260, 180);  // as in a window whose docks are not sized yet
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  view.setGraph(make_seed_demo_graph());
  ASSERT_TRUE(waitForLayout(&view));
  const double small = view.transform().m11();
  view.resize(900, 700);
  QTest::qWait(50);
  EXPECT_GT(view.transform().m11(), small);
  const QRectF drawn = view.scene()->itemsBoundingRect();
  const QRectF seen = view.mapToScene(view.viewport()->rect()).boundingRect();
  EXPECT_TRUE(seen.contains(drawn.adjusted(10, 10, -10, -10)));
  // Once the user zooms, a resize leaves the zoom alone.
  view.zoomBy(1.25);
  const double chosen = view.transform().m11();
  view.resize(500, 400);
  QTest::qWait(50);
  EXPECT_DOUBLE_EQ(view.transform().m11(), chosen);
}

TEST(GraphView, SeedDemoGraphSelectionDetailsSourceLinkAndSearch) {
  ModelGraphWidget w;
  w.resize(1100, 650);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  w.setGraph(make_seed_demo_graph());
  ASSERT_TRUE(waitForLayout(w.view()));
  ASSERT_EQ(w.view()->nodeItems().size(), 6u);

  // One outline holding all four op boxes.
  std::vector<GroupOutlineItem*> outlines;
  for (QGraphicsItem* item : w.view()->scene()->items())
    if (auto* o = dynamic_cast<GroupOutlineItem*>(item)) outlines.push_back(o);
  ASSERT_EQ(outlines.size(), 1u);
  for (NodeItem* n : w.view()->nodeItems())
    if (n->item().kind == GraphViewModel::Item::Kind::Node)
      EXPECT_TRUE(outlines[0]->path().contains(n->sceneBoundingRect().adjusted(4, 4, -4, -4)));
  // Nothing drawn outside what the view can scroll to.
  EXPECT_TRUE(w.view()->sceneRect().contains(w.view()->scene()->itemsBoundingRect()));

  // Click the convolution box.
  QSignalSpy selected(&w, &ModelGraphWidget::nodeSelected);
  NodeItem* conv = w.view()->nodeItems()[w.view()->model()->item_of_node(0)];
  QPoint at = w.view()->mapFromScene(conv->scenePos());
  QTest::mouseClick(w.view()->viewport(), Qt::LeftButton, {}, at);
  ASSERT_EQ(selected.count(), 1);
  EXPECT_EQ(selected.front().front().toInt(), 0);
  QString details = w.details()->text();
  EXPECT_TRUE(details.contains("convolution"));
  EXPECT_TRUE(details.contains("128, 16, 30, 30"));
  EXPECT_TRUE(details.contains("conv_weight"));
  EXPECT_TRUE(details.contains("group 0: conv+epilogue"));
  save(w, "graph_view_seed.png");

  QRegularExpressionMatch link = QRegularExpression("href='([^']+)'").match(details);
  ASSERT_TRUE(link.hasMatch());
  QSignalSpy open(&w, &ModelGraphWidget::openSourceRequested);
  w.details()->activateLink(link.captured(1).replace("&amp;", "&"));
  ASSERT_EQ(open.count(), 1);
  EXPECT_EQ(open.front()[0].toString(), "examples/conv2d_min_add_multiply.py");
  EXPECT_EQ(open.front()[1].toInt(), 29);

  // Search by op name highlights the match and selects it.
  QTest::keyClicks(w.searchField(), "add");
  EXPECT_EQ(w.view()->matchCount(), 1);
  EXPECT_EQ(w.matchText(), "1 of 1");
  EXPECT_EQ(w.view()->selectedNode(), 2);
  EXPECT_TRUE(w.view()->nodeItems()[w.view()->model()->item_of_node(2)]->isMatched());
  EXPECT_FALSE(conv->isMatched());
  w.searchField()->clear();
  EXPECT_EQ(w.view()->matchCount(), 0);
}

TEST(GraphView, GeneratedTransformerCollapsesExpandsRevealsAndCachesLayouts) {
  ModelGraphWidget w;
  w.resize(1400, 900);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  QElapsedTimer timer;
  timer.start();
  w.setGraph(make_transformer_graph(2000));
  GraphView* view = w.view();
  ASSERT_TRUE(waitForLayout(view));
  QPixmap first = view->viewport()->grab();
  ASSERT_FALSE(first.isNull());
  std::printf("2000-node graph: layout + first paint %lld ms (%zu boxes)\n", (long long)timer.elapsed(),
              view->nodeItems().size());
  ASSERT_LE(view->nodeItems().size(), 300u);
  save(w, "graph_view_2000_overview.png");

  // Double-click a collapsed block: it expands and the layout is cached per state.
  GraphViewModel* model = view->model();
  ASSERT_TRUE(model->is_collapsed("layers.5.attn"));
  int index = model->item_of_scope("layers.5.attn");
  ASSERT_GE(index, 0);
  NodeItem* scope = view->nodeItems()[index];
  view->centerOn(scope);
  std::size_t before = view->nodeItems().size();
  QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, view->mapFromScene(scope->scenePos()));
  ASSERT_TRUE(waitForLayout(view));
  EXPECT_FALSE(model->is_collapsed("layers.5.attn"));
  EXPECT_EQ(view->nodeItems().size(), before + 30 - 1);
  EXPECT_EQ(view->cachedLayouts(), 2);
  save(w, "graph_view_2000_expanded_attn.png");

  // Collapsing again comes straight from the cache.
  view->collapseScope("layers.5.attn");
  EXPECT_FALSE(view->layoutPending());
  EXPECT_EQ(view->nodeItems().size(), before);
  EXPECT_EQ(view->cachedLayouts(), 2);

  // Selecting a node hidden in a collapsed scope reveals it and selects it.
  int softmax = model->search("layers.7.attn")[0];
  for (int id : model->search("_softmax"))
    if (model->graph().node(id)->scope == "layers.7.attn") softmax = id;
  ASSERT_FALSE(model->collapsed_ancestor(softmax).empty());
  QSignalSpy selected(&w, &ModelGraphWidget::nodeSelected);
  w.selectNode(softmax);
  ASSERT_TRUE(waitForLayout(view));
  EXPECT_TRUE(model->collapsed_ancestor(softmax).empty());
  NodeItem* item = view->nodeItems()[model->item_of_node(softmax)];
  EXPECT_TRUE(item->isSelected());
  EXPECT_TRUE(view->viewport()->rect().contains(view->mapFromScene(item->scenePos())));
  EXPECT_TRUE(w.details()->text().contains("_softmax"));
  save(w, "graph_view_2000_selected.png");

  // Heat: matmuls get the GPU time; the legend switches to the heat scale.
  std::map<int, double> heat;
  for (const auto& n : model->graph().nodes)
    if (n.op_class == OpClass::Matmul) heat[n.id] = n.flops;
  view->setNodeHeat(heat);
  EXPECT_TRUE(view->showsHeat());
  view->showOverview();
  save(w, "graph_view_2000_heat.png");
}

// In a narrow, tall panel (the studio's graph dock beside the hot-op table) the fitted model is as wide as
// the view, so the legend in the top-right corner would cover its input node: the fit keeps a band above
// the graph for it, with and without the heat scale. In a wide view the legend sits beside the graph.
TEST(GraphView, TheFittedGraphIsNeverDrawnUnderTheLegend) {
  for (const QSize size : {QSize(280, 480), QSize(1200, 500)}) {
    for (bool heat : {false, true}) {
      SCOPED_TRACE(std::to_string(size.width()) + (heat ? " heat" : " classes"));
      GraphView view;
      view.resize(size);
      view.show();
      view.setGraph(make_seed_demo_graph());
      ASSERT_TRUE(waitForLayout(&view));
      if (heat) {
        std::map<int, double> shares;
        for (const auto& n : view.model()->graph().nodes) shares[n.id] = n.id;
        view.setNodeHeat(shares);
      }
      if (!heat) view.showOverview();  // with heat, setNodeHeat refits the view the layout fitted
      QApplication::processEvents();
      const auto* legend = view.findChild<QLabel*>();
      ASSERT_TRUE(legend && legend->isVisible());
      // The legend is a child of the view; the nodes are drawn in its viewport.
      const QRect legend_in_viewport = legend->geometry().translated(-view.viewport()->pos());
      ASSERT_FALSE(view.nodeItems().empty());
      for (NodeItem* item : view.nodeItems()) {
        const QRect drawn = view.mapFromScene(item->sceneBoundingRect()).boundingRect();
        EXPECT_FALSE(drawn.intersects(legend_in_viewport))
            << "node at " << drawn.x() << "," << drawn.y() << " under the legend at " << legend_in_viewport.x()
            << "," << legend_in_viewport.y() << " " << legend_in_viewport.width() << "x" << legend_in_viewport.height();
        EXPECT_TRUE(view.viewport()->rect().contains(drawn.center()));
      }
      if (size.width() == 280 && heat) save(view, "graph_view_narrow_heat.png");
    }
  }
}

TEST(GraphView, FiveThousandNodesOpenCollapsedAndSearchFindsHiddenNodes) {
  GraphView view;
  view.resize(1200, 800);
  view.show();
  view.setGraph(make_transformer_graph(5000));
  ASSERT_TRUE(waitForLayout(&view));
  EXPECT_LE(view.nodeItems().size(), 300u);
  int found = view.search("fc2");
  EXPECT_EQ(found, 4 * 116);  // four core-ATen nodes per block's fc2
  ASSERT_TRUE(waitForLayout(&view));
  EXPECT_EQ(view.currentMatch(), 0);
  view.nextMatch();
  ASSERT_TRUE(waitForLayout(&view));
  EXPECT_EQ(view.currentMatch(), 1);
  EXPECT_EQ(view.selectedNode(), view.model()->search("fc2")[1]);
  save(view, "graph_view_5000_search.png");
}

}  // namespace
}  // namespace nova::ui
