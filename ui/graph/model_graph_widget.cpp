#include "ui/graph/model_graph_widget.h"

#include <QHBoxLayout>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

namespace nova::ui {

ModelGraphWidget::ModelGraphWidget(QWidget* parent)
    : QWidget(parent),
      view_(new GraphView(this)),
      details_(new NodeDetailPanel(this)),
      search_(new QLineEdit(this)),
      matches_(new QLabel(this)) {
  search_->setPlaceholderText("Search ops, targets, scopes, values");
  search_->setClearButtonEnabled(true);
  auto button = [this](const QString& text, const QString& tip, auto slot) {
    auto* b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(tip);
    connect(b, &QToolButton::clicked, view_, slot);
    return b;
  };
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 4, 4, 0);
  bar->addWidget(search_, 1);
  bar->addWidget(matches_);
  bar->addWidget(button("‹", "Previous match (,)", &GraphView::previousMatch));
  bar->addWidget(button("›", "Next match (.)", &GraphView::nextMatch));
  bar->addSpacing(12);
  bar->addWidget(button("Fit", "Fit the graph (0)", &GraphView::fitAll));
  bar->addWidget(button("Expand all", "Expand every module scope", &GraphView::expandAll));
  bar->addWidget(button("Overview", "Collapse module scopes to an overview", &GraphView::collapseDefault));

  auto* split = new QSplitter(this);
  split->setChildrenCollapsible(false);  // a divider never hides a panel
  split->addWidget(view_);
  split->addWidget(details_);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  split->setSizes({4000, 240});  // the graph takes the room; the details start at their narrowest
  split->setCollapsible(0, false);
  // Long strides and source lines wrap instead of taking the graph's room.
  details_->setMinimumWidth(240);
  details_->setMaximumWidth(420);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addWidget(split, 1);

  connect(search_, &QLineEdit::returnPressed, this, [this] {
    if (view_->matchCount() > 0)
      view_->nextMatch();
    else
      view_->search(search_->text());
  });
  connect(search_, &QLineEdit::textChanged, view_, &GraphView::search);
  connect(view_, &GraphView::matchChanged, this, [this](int current, int total) {
    matches_->setText(total == 0 ? (search_->text().isEmpty() ? QString() : "no match")
                                 : QString("%1 of %2").arg(current + 1).arg(total));
  });
  connect(view_, &GraphView::nodeSelected, this, [this](int id) {
    if (view_->graph()) details_->showNode(*view_->graph(), id);
    emit nodeSelected(id);
  });
  connect(view_, &GraphView::scopeSelected, this,
          [this](const QString& scope) { details_->showScope(*view_->model(), scope.toStdString()); });
  connect(view_, &GraphView::selectionCleared, details_, &NodeDetailPanel::clear);
  connect(details_, &NodeDetailPanel::openSourceRequested, this, &ModelGraphWidget::openSourceRequested);
}

}  // namespace nova::ui
