#include "ui/trace/hot_op_table_model.h"

#include "core/trace/hot_op_ranking.h"

#include <algorithm>

#include <QBrush>
#include <QColor>

namespace nova::ui {
namespace {

QString rate(double v, const char* unit) {
  if (v <= 0) return QStringLiteral("–");
  if (v >= 1e12) return QString("%1 T%2").arg(v / 1e12, 0, 'f', 2).arg(unit);
  if (v >= 1e9) return QString("%1 G%2").arg(v / 1e9, 0, 'f', 1).arg(unit);
  return QString("%1 M%2").arg(v / 1e6, 0, 'f', 1).arg(unit);
}

QString us(double ns) { return QString::number(ns / 1e3, 'f', 2); }

}  // namespace

HotOpTableModel::HotOpTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void HotOpTableModel::setRows(std::vector<OpStats> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int HotOpTableModel::rowOfNode(int node) const {
  for (std::size_t i = 0; i < rows_.size(); ++i)
    if (std::find(rows_[i].nodes.begin(), rows_[i].nodes.end(), node) != rows_[i].nodes.end())
      return static_cast<int>(i);
  return -1;
}

int HotOpTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int HotOpTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant HotOpTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const OpStats& r = rows_[static_cast<std::size_t>(index.row())];
  double per_call = r.calls > 0 ? r.gpu_ns / r.calls : r.gpu_ns;
  if (role == IdRole) return r.id;
  if (role == LevelRole) return static_cast<int>(r.level);
  if (role == SortRole) {
    switch (index.column()) {
      case Rank:
        return index.row() + 1;
      case Name:
        return QString::fromStdString(r.name);
      case Share:
        return r.share;
      case Total:
        return r.gpu_ns;
      case PerCall:
        return per_call;
      case Calls:
        return r.calls;
      case Kernels:
        return r.kernels;
      case Launches:
        return r.launches;
      case Bandwidth:
        return r.achieved_bytes_per_s;
      case FlopRate:
        return r.achieved_flops_per_s;
      case Headroom:
        return r.headroom;
    }
  }
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case Rank:
        return index.row() + 1;
      case Name:
        return r.level == OpStats::Level::Node
                   ? QString("[%1] %2").arg(r.id).arg(QString::fromStdString(r.name))
                   : QString::fromStdString(r.name);
      case Share:
        return QString("%1%").arg(r.share * 100, 0, 'f', 1);
      case Total:
        return us(r.gpu_ns);
      case PerCall:
        return us(per_call);
      case Calls:
        return r.calls;
      case Kernels:
        return r.kernels;
      case Launches:
        return r.launches;
      case Bandwidth:
        return rate(r.achieved_bytes_per_s, "B/s");
      case FlopRate:
        return rate(r.achieved_flops_per_s, "FLOP/s");
      case Headroom:
        return r.headroom > 0 ? QString("%1x").arg(r.headroom, 0, 'f', 1) : QStringLiteral("–");
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() != Name)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole) {
    QString tip = QString::fromStdString(r.name);
    if (!r.op_class.empty()) tip += " (" + QString::fromStdString(r.op_class) + ")";
    for (const auto& k : r.top_kernels) tip += "\n  " + QString::fromStdString(k);
    return tip;
  }
  if (role == Qt::BackgroundRole && index.column() == Share) {
    // A bar of the share's strength: the eye finds the hot rows first.
    int alpha = static_cast<int>(std::clamp(r.share, 0.0, 1.0) * 160);
    return QBrush(QColor(0xe0, 0x60, 0x30, alpha));
  }
  return {};
}

QVariant HotOpTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole && section == Headroom) return QString(HotOpRanking::kHeadroomMeaning);
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case Rank:
      return tr("#");
    case Name:
      return tr("Op");
    case Share:
      return tr("Time %");
    case Total:
      return tr("Total (us)");
    case PerCall:
      return tr("Per call (us)");
    case Calls:
      return tr("Calls");
    case Kernels:
      return tr("Kernels");
    case Launches:
      return tr("Launches");
    case Bandwidth:
      return tr("Bandwidth");
    case FlopRate:
      return tr("FLOP rate");
    case Headroom:
      return tr("Headroom");
  }
  return {};
}

}  // namespace nova::ui
