#include "ui/graph/graph_view.h"

#include <QContextMenuEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QScrollBar>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "ui/graph/graph_layout_engine.h"
#include "ui/graph/graph_scene_builder.h"
#include "ui/graph/node_item.h"
#include "ui/graph/op_class_palette.h"

namespace nova::ui {
namespace {

// Below this many boxes dot finishes in well under 100 ms here, so the UI thread does it.
constexpr std::size_t kSynchronousItems = 150;
constexpr double kMinScale = 0.01, kMaxScale = 4.0, kReadableScale = 0.6;

}  // namespace

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent), legend_(new QLabel(this)) {
  setScene(new QGraphicsScene(this));
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(QGraphicsView::ScrollHandDrag);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setResizeAnchor(QGraphicsView::AnchorViewCenter);
  setBackgroundBrush(QColor("#fbfbfb"));
  setFocusPolicy(Qt::StrongFocus);
  setOptimizationFlag(QGraphicsView::DontSavePainterState);
  connect(scene(), &QGraphicsScene::selectionChanged, this, &GraphView::onSceneSelectionChanged);
  legend_->setAttribute(Qt::WA_TransparentForMouseEvents);
  legend_->setStyleSheet(
      "QLabel { background: rgba(255,255,255,230); border: 1px solid #bbb; padding: 4px; }");
  updateLegend();
}

GraphView::~GraphView() {
  // The worker writes into a result this view no longer reads; let it finish before Graphviz state
  // and the program go away.
  if (worker_) worker_->wait();
  // The scene outlives this object's members; deleting its items must not call back into them.
  scene()->disconnect(this);
  updating_selection_ = true;
}

void GraphView::setGraph(ModelGraph graph, int max_visible) {
  graph_ = std::make_unique<ModelGraph>(std::move(graph));
  model_ = std::make_unique<GraphViewModel>(*graph_);
  max_visible_ = max_visible;
  model_->apply_default_collapse(max_visible_);
  cache_.clear();
  heat_.clear();
  matches_.clear();
  current_match_ = -1;
  selected_node_.reset();
  pending_focus_.reset();
  fit_after_layout_ = true;
  updateLegend();
  relayout();
}

void GraphView::relayout() {
  if (!model_) return;
  const std::string key = model_->state_key();
  const int generation = ++generation_;
  if (auto it = cache_.find(key); it != cache_.end()) {
    pending_generation_ = 0;
    showLayout(it->second);
    return;
  }
  LayoutRequest request = GraphSceneBuilder::request(*model_);
  if (request.sizes.size() <= kSynchronousItems) {
    pending_generation_ = 0;
    showLayout(cache_[key] = GraphLayoutEngine().layout(request));
    return;
  }
  pending_generation_ = generation;
  scene()->clear();
  node_items_.clear();
  scene()->addText(QString("Laying out %1 boxes…").arg(request.sizes.size()));
  auto result = std::make_shared<std::optional<GraphLayout>>();
  QThread* thread = QThread::create([request = std::move(request), result] {
    try {
      *result = GraphLayoutEngine().layout(request);
    } catch (const std::exception&) {
      result->reset();
    }
  });
  connect(thread, &QThread::finished, thread, &QObject::deleteLater);
  connect(thread, &QThread::finished, this, [this, result, key, generation] {
    if (!result->has_value()) {
      scene()->clear();
      scene()->addText("Graphviz could not lay out this graph.");
      pending_generation_ = 0;
      return;
    }
    cache_[key] = **result;
    // A later request superseded this one: keep the layout for that state, show nothing.
    if (generation != generation_) return;
    pending_generation_ = 0;
    showLayout(cache_[key]);
  });
  worker_ = thread;
  thread->start();
}

void GraphView::showLayout(const GraphLayout& layout) {
  layout_ = layout;
  updating_selection_ = true;
  node_items_ = GraphSceneBuilder::build(*scene(), *model_, layout);
  setSceneRect(QRectF());  // follow the new layout's rect again (a fit may have added a band for the legend)
  updating_selection_ = false;
  applyDecorations();
  if (pending_focus_) {
    centerOnNode(*pending_focus_);
    pending_focus_.reset();
  } else if (fit_after_layout_) {
    showOverview();
    auto_fitted_ = true;
  }
  fit_after_layout_ = false;
  emit layoutReady();
}

void GraphView::applyDecorations() {
  if (!model_) return;
  std::vector<double> heat(node_items_.size(), 0.0);
  double max_heat = 0;
  for (const auto& [id, share] : heat_) {
    int index = model_->item_of_node(id);
    if (index >= 0 && index < static_cast<int>(heat.size())) heat[index] += share;
  }
  for (double h : heat) max_heat = std::max(max_heat, h);
  std::vector<char> matched(node_items_.size(), 0);
  for (int id : matches_)
    if (int index = model_->item_of_node(id); index >= 0 && index < static_cast<int>(matched.size()))
      matched[index] = 1;
  int current = current_match_ >= 0 ? model_->item_of_node(matches_[current_match_]) : -1;
  updating_selection_ = true;
  for (NodeItem* item : node_items_) {
    int i = item->index();
    if (heat_.empty())
      item->setHeat(std::nullopt);
    else
      item->setHeat(max_heat > 0 ? heat[i] / max_heat : 0.0);
    item->setMatched(matched[i]);
    item->setCurrentMatch(i == current);
    bool selected = selected_node_ && item->item().kind == GraphViewModel::Item::Kind::Node &&
                    item->item().node_id == *selected_node_;
    item->setSelected(selected);
  }
  updating_selection_ = false;
}

void GraphView::setNodeHeat(const std::map<int, double>& heat) {
  heat_ = heat;
  applyDecorations();
  updateLegend();
  if (auto_fitted_) showOverview();  // the legend changed size: keep the fitted graph clear of it
}

void GraphView::updateLegend() {
  QString html = "<table cellspacing=2>";
  if (!heat_.empty()) {
    html += "<tr><td colspan=2><b>share of GPU time</b></td></tr>";
    for (double share : {1.0, 0.5, 0.1, 0.0})
      html += QString("<tr><td bgcolor='%1' width=14>&nbsp;</td><td>%2 of max</td></tr>")
                  .arg(OpClassPalette::heat(share).name())
                  .arg(QString::number(share * 100) + "%");
  } else {
    for (OpClass c : OpClassPalette::classes())
      html += QString("<tr><td bgcolor='%1' width=14>&nbsp;</td><td>%2</td></tr>")
                  .arg(OpClassPalette::fill(c).name(), OpClassPalette::name(c));
  }
  html += "</table>";
  legend_->setText(html);
  legend_->adjustSize();
  legend_->move(width() - legend_->width() - verticalScrollBar()->sizeHint().width() - 6, 6);
}

void GraphView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  updateLegend();  // placed first: the fit below keeps the graph clear of it
  // The first layout is often fitted before the window has its final geometry (docks are sized
  // after it shows): keep the whole model in view until the user zooms or moves to a node.
  if (auto_fitted_) showOverview();
}

void GraphView::centerOnNode(int id) {
  if (!model_) return;
  auto_fitted_ = false;
  int index = model_->item_of_node(id);
  if (index < 0 || index >= static_cast<int>(node_items_.size())) return;
  // Zoom in to reading size when the whole graph is on screen.
  if (transform().m11() < 0.7) {
    QTransform t;
    t.scale(1.0, 1.0);
    setTransform(t);
  }
  centerOn(node_items_[index]);
}

void GraphView::selectNode(int id) {
  if (!graph_ || !graph_->node(id)) return;
  selected_node_ = id;
  if (model_->reveal(id)) {
    pending_focus_ = id;
    relayout();
  } else {
    applyDecorations();
    centerOnNode(id);
  }
  emit nodeSelected(id);
}

void GraphView::onSceneSelectionChanged() {
  if (updating_selection_) return;
  const auto selected = scene()->selectedItems();
  NodeItem* item = selected.isEmpty() ? nullptr : dynamic_cast<NodeItem*>(selected.front());
  if (!item) {
    selected_node_.reset();
    emit selectionCleared();
    return;
  }
  const auto& it = item->item();
  if (it.kind == GraphViewModel::Item::Kind::Node) {
    selected_node_ = it.node_id;
    emit nodeSelected(it.node_id);
  } else if (it.kind == GraphViewModel::Item::Kind::Scope) {
    selected_node_.reset();
    emit scopeSelected(QString::fromStdString(it.scope));
  } else {
    selected_node_.reset();
    emit selectionCleared();
  }
}

void GraphView::expandScope(const std::string& scope) {
  if (!model_ || !model_->is_collapsed(scope)) return;
  auto members = model_->nodes_in(scope);
  model_->expand(scope);
  if (!members.empty()) pending_focus_ = members.front();
  relayout();
}

void GraphView::collapseScope(const std::string& scope) {
  if (!model_ || model_->is_collapsed(scope) || model_->member_count(scope) == 0) return;
  auto members = model_->nodes_in(scope);
  model_->collapse(scope);
  pending_focus_ = members.front();
  relayout();
}

void GraphView::expandAll() {
  if (!model_) return;
  model_->expand_all();
  fit_after_layout_ = true;
  relayout();
}

void GraphView::collapseDefault() {
  if (!model_) return;
  model_->apply_default_collapse(max_visible_);
  fit_after_layout_ = true;
  relayout();
}

double GraphView::legendBand(double scale) const {
  // The legend sits over the top-right corner. The graph, centred, clears it when the legend fits in the
  // margin right of the graph at this scale; otherwise the fit keeps a band above the graph for it (in a
  // narrow panel a tall model's input node was drawn under the legend).
  if (legend_->isHidden()) return 0;
  const double margin = (viewport()->width() - scene()->sceneRect().width() * scale) / 2;
  return legend_->width() + 12 <= margin ? 0 : legend_->geometry().bottom() + 6;
}

QRectF GraphView::showWithLegendBand(double scale) {
  // The view's rect gets the band above the graph, so that centring it (the whole graph fits, nothing
  // scrolls) or scrolling to its top draws the graph below the legend.
  const QRectF shown = scene()->sceneRect().adjusted(0, -legendBand(scale) / scale, 0, 0);
  setSceneRect(shown);
  return shown;
}

void GraphView::fitAll() {
  if (scene()->items().isEmpty()) return;
  const QRectF r = scene()->sceneRect();
  const double vw = viewport()->width(), vh = viewport()->height();
  double s = std::min(vw / r.width(), vh / r.height());
  const double band = legendBand(s);
  if (band > 0) s = std::min(vw / r.width(), std::max(1.0, vh - band) / r.height());
  s = std::clamp(s, kMinScale, 1.5);
  setTransform(QTransform::fromScale(s, s));
  centerOn(showWithLegendBand(s).center());
}

void GraphView::showOverview() {
  fitAll();
  // A long model fitted whole is a hairline; open it readable at its inputs instead, as Netron does.
  if (transform().m11() < kReadableScale) {
    const QRectF r = scene()->sceneRect();
    double s = std::clamp(viewport()->width() / r.width(), kReadableScale, 1.0);
    setTransform(QTransform::fromScale(s, s));
    centerOn(r.center().x(), showWithLegendBand(s).top() + viewport()->height() / (2 * s));
  }
}

void GraphView::zoomBy(double factor) {
  auto_fitted_ = false;
  double s = transform().m11() * factor;
  if (s < kMinScale) factor = kMinScale / transform().m11();
  if (s > kMaxScale) factor = kMaxScale / transform().m11();
  scale(factor, factor);
}

void GraphView::wheelEvent(QWheelEvent* event) {
  zoomBy(std::pow(1.0015, event->angleDelta().y()));
  event->accept();
}

void GraphView::keyPressEvent(QKeyEvent* event) {
  const int step = 80;
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
    case Qt::Key_W:
      zoomBy(1.25);
      break;
    case Qt::Key_Minus:
    case Qt::Key_S:
      zoomBy(0.8);
      break;
    case Qt::Key_A:
      horizontalScrollBar()->setValue(horizontalScrollBar()->value() - step);
      break;
    case Qt::Key_D:
      horizontalScrollBar()->setValue(horizontalScrollBar()->value() + step);
      break;
    case Qt::Key_F:
      if (selected_node_ && model_ && model_->item_of_node(*selected_node_) >= 0)
        centerOnNode(*selected_node_);
      else
        fitAll();
      break;
    case Qt::Key_0:
      fitAll();
      break;
    case Qt::Key_Period:
      nextMatch();
      break;
    case Qt::Key_Comma:
      previousMatch();
      break;
    case Qt::Key_Escape:
      scene()->clearSelection();
      search(QString());
      break;
    default:
      QGraphicsView::keyPressEvent(event);
      return;
  }
  event->accept();
}

NodeItem* GraphView::itemAt(const QPoint& pos) const {
  for (QGraphicsItem* item : items(pos))
    if (auto* node = dynamic_cast<NodeItem*>(item)) return node;
  return nullptr;
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* event) {
  NodeItem* item = itemAt(event->pos());
  if (item && item->isScope()) {
    expandScope(item->item().scope);
    event->accept();
    return;
  }
  QGraphicsView::mouseDoubleClickEvent(event);
}

void GraphView::contextMenuEvent(QContextMenuEvent* event) {
  if (!model_) return;
  QMenu menu(this);
  if (NodeItem* item = itemAt(event->pos())) {
    const auto& it = item->item();
    std::string scope;
    if (it.kind == GraphViewModel::Item::Kind::Scope) {
      scope = it.scope;
      menu.addAction(QString("Expand %1").arg(QString::fromStdString(scope)),
                     [this, scope] { expandScope(scope); });
    } else if (it.kind == GraphViewModel::Item::Kind::Node) {
      scope = graph_->node(it.node_id)->scope;
      if (const FusionGroup* g = graph_->group_of(it.node_id)) {
        const int group = g->id;
        menu.addAction(QString("Send group %1 to LLM").arg(group), this, [this, group] { emit sendToLlm(group); });
        menu.addSeparator();
      }
      if (!scope.empty())
        menu.addAction(QString("Collapse %1").arg(QString::fromStdString(scope)),
                       [this, scope] { collapseScope(scope); });
    }
    // Every enclosing module, innermost first.
    for (auto dot = scope.rfind('.'); dot != std::string::npos; dot = scope.rfind('.', dot - 1)) {
      std::string parent = scope.substr(0, dot);
      menu.addAction(QString("Collapse %1").arg(QString::fromStdString(parent)),
                     [this, parent] { collapseScope(parent); });
      if (dot == 0) break;
    }
    menu.addSeparator();
  }
  menu.addAction("Expand all", this, &GraphView::expandAll);
  menu.addAction("Collapse to overview", this, &GraphView::collapseDefault);
  menu.addAction("Fit (0)", this, &GraphView::fitAll);
  menu.exec(event->globalPos());
}

int GraphView::search(const QString& query) {
  matches_ = model_ ? model_->search(query.trimmed().toStdString()) : std::vector<int>{};
  current_match_ = -1;
  applyDecorations();
  if (!matches_.empty())
    goToMatch(0);
  else
    emit matchChanged(-1, 0);
  return matchCount();
}

void GraphView::goToMatch(int index) {
  if (matches_.empty()) return;
  const int n = matchCount();
  current_match_ = ((index % n) + n) % n;
  selectNode(matches_[current_match_]);
  applyDecorations();
  emit matchChanged(current_match_, n);
}

void GraphView::nextMatch() { goToMatch(current_match_ + 1); }
void GraphView::previousMatch() { goToMatch(current_match_ - 1); }

}  // namespace nova::ui
