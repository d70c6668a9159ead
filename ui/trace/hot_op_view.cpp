#include "ui/trace/hot_op_view.h"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "core/trace/hot_op_ranking.h"
#include "ui/trace/hot_op_table_model.h"

namespace nova::ui {
namespace {
constexpr int kMaxNameWidth = 320;  // pixels; longer names are elided in the middle
}  // namespace

HotOpView::HotOpView(QWidget* parent)
    : QWidget(parent),
      model_(new HotOpTableModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView(this)),
      filter_(new QLineEdit(this)),
      by_(new QComboBox(this)),
      send_(new QPushButton(tr("Send to generator"), this)),
      note_(new QLabel(this)) {
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(HotOpTableModel::SortRole);
  proxy_->setFilterKeyColumn(HotOpTableModel::Name);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(HotOpTableModel::Total, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->verticalHeader()->hide();
  // The op's name keeps the width it needs (up to kMaxNameWidth, then elided in the middle with the whole
  // name in its tooltip); the last column takes what is left. A stretched name column was squeezed to a
  // few pixels ("[5] lin...") when the numeric columns filled the dock.
  table_->setWordWrap(false);
  table_->setTextElideMode(Qt::ElideMiddle);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAlternatingRowColors(true);
  filter_->setPlaceholderText(tr("Filter ops…"));
  filter_->setClearButtonEnabled(true);
  by_->addItems({tr("By node"), tr("By fusion group")});
  send_->setEnabled(false);

  auto* bar = new QHBoxLayout;
  bar->addWidget(filter_, 1);
  bar->addWidget(by_);
  bar->addWidget(send_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(bar);
  layout->addWidget(table_, 1);
  // What the columns mean stays under the table, not only in a tooltip.
  note_->setWordWrap(true);
  note_->setStyleSheet("color: palette(mid)");
  layout->addWidget(note_);

  connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
  connect(by_, &QComboBox::currentIndexChanged, this, [this] { rerank(); });
  connect(send_, &QPushButton::clicked, this, &HotOpView::sendSelection);
  table_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(table_, &QTableView::customContextMenuRequested, this, [this](const QPoint& pos) {
    const QList<int> ids = selectedIds();
    if (ids.isEmpty()) return;
    QMenu menu(this);
    menu.addAction(tr("Send to generator"), this, &HotOpView::sendSelection);
    menu.addAction(tr("Send to LLM"), this, [this, ids] { emit sendToLlm(ids, by_->currentIndex() == 1); });
    menu.exec(table_->viewport()->mapToGlobal(pos));
  });
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
    QList<int> ids = selectedIds();
    send_->setEnabled(!ids.isEmpty() && !(ids.size() == 1 && ids[0] < 0));
    if (syncing_) return;
    QModelIndexList rows = table_->selectionModel()->selectedRows();
    if (rows.size() == 1) {
      const OpStats& op = model_->op(proxy_->mapToSource(rows[0]).row());
      if (!op.nodes.empty()) emit nodeSelected(op.nodes.front());
    }
  });
}

void HotOpView::setAttribution(const AttributionResult& result) {
  result_ = result;
  note_->setText(result.total_gpu_ns > 0 ? QString::fromStdString(std::string(HotOpRanking::kHeadroomMeaning) +
                                                                  ".\n" + HotOpRanking::dash_meaning(result))
                                         : QString());
  rerank();
}

QString HotOpView::note() const { return note_->text(); }

void HotOpView::setRankByGroup(bool by_group) { by_->setCurrentIndex(by_group ? 1 : 0); }

void HotOpView::setFilter(const QString& text) { filter_->setText(text); }

void HotOpView::rerank() {
  bool groups = by_->currentIndex() == 1;
  model_->setRows(HotOpRanking::rank(result_, groups ? HotOpRanking::By::Group : HotOpRanking::By::Node));
  table_->resizeColumnsToContents();
  table_->setColumnWidth(HotOpTableModel::Name, std::min(table_->columnWidth(HotOpTableModel::Name), kMaxNameWidth));
}

QList<int> HotOpView::selectedIds() const {
  QList<int> ids;
  QModelIndexList rows = table_->selectionModel()->selectedRows();
  std::sort(rows.begin(), rows.end(),
            [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
  for (const auto& r : rows) {
    const OpStats& op = model_->op(proxy_->mapToSource(r).row());
    if (op.level != OpStats::Level::Unattributed) ids.push_back(op.id);
  }
  return ids;
}

void HotOpView::sendSelection() {
  QList<int> ids = selectedIds();
  if (!ids.isEmpty()) emit sendToGenerator(ids, by_->currentIndex() == 1);
}

void HotOpView::selectNode(int node) {
  int row = model_->rowOfNode(node);
  syncing_ = true;
  if (row < 0) {
    table_->clearSelection();
  } else {
    QModelIndex idx = proxy_->mapFromSource(model_->index(row, 0));
    if (idx.isValid()) {
      table_->selectionModel()->select(idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
      table_->scrollTo(idx);
    }
  }
  syncing_ = false;
}

}  // namespace nova::ui
