#include "ui/versions/version_tree_model.h"

#include <QApplication>
#include <QBrush>
#include <QStyle>
#include <QColor>
#include <QFont>

#include <map>

namespace nova::ui {

VersionTreeModel::VersionTreeModel(QObject* parent) : QAbstractItemModel(parent) {}
VersionTreeModel::~VersionTreeModel() = default;

void VersionTreeModel::setVersions(const std::vector<FusionGroupRecord>& groups,
                                   const std::vector<CandidateVersion>& versions) {
  beginResetModel();
  root_.children.clear();
  nodes_.clear();
  std::map<int64_t, Node*> group_nodes, version_nodes;
  std::map<int64_t, int> per_group;  // versions numbered 1, 2, ... within their group
  auto adopt = [](Node* parent, Node* child) {
    child->parent = parent;
    child->row = static_cast<int>(parent->children.size());
    parent->children.push_back(child);
  };
  for (const auto& g : groups) {
    auto& n = nodes_.emplace_back(std::make_unique<Node>());
    n->group = g;
    adopt(&root_, n.get());
    group_nodes[g.id] = n.get();
  }
  // Versions come oldest first, so a parent is always placed before its children.
  for (const auto& v : versions) {
    auto group = group_nodes.find(v.group_id);
    if (group == group_nodes.end()) continue;
    auto& n = nodes_.emplace_back(std::make_unique<Node>());
    n->version = v;
    n->number = ++per_group[v.group_id];
    Node* parent = group->second;
    if (v.parent_id)
      if (auto p = version_nodes.find(*v.parent_id); p != version_nodes.end()) {
        parent = p->second;
        // An alternative (a builtin version of another rule written beside the primary) is the
        // primary's sibling, not its child: neither derives from the other.
        const CandidateVersion& pv = *parent->version;
        if (v.origin.kind == OriginKind::builtin && pv.origin.kind == OriginKind::builtin &&
            v.origin.rule != pv.origin.rule)
          parent = parent->parent;
      }
    adopt(parent, n.get());
    version_nodes[v.id] = n.get();
  }
  endResetModel();
}

VersionTreeModel::Node* VersionTreeModel::node(const QModelIndex& index) const {
  return index.isValid() ? static_cast<Node*>(index.internalPointer()) : const_cast<Node*>(&root_);
}

std::optional<int64_t> VersionTreeModel::versionId(const QModelIndex& index) const {
  if (!index.isValid() || !node(index)->version) return std::nullopt;
  return node(index)->version->id;
}

const CandidateVersion* VersionTreeModel::version(int64_t id) const {
  for (const auto& n : nodes_)
    if (n->version && n->version->id == id) return &*n->version;
  return nullptr;
}

QModelIndex VersionTreeModel::indexOfVersion(int64_t id) const {
  for (const auto& n : nodes_)
    if (n->version && n->version->id == id) return createIndex(n->row, 0, n.get());
  return {};
}

QModelIndex VersionTreeModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  return createIndex(row, column, node(parent)->children[row]);
}

QModelIndex VersionTreeModel::parent(const QModelIndex& child) const {
  if (!child.isValid()) return {};
  Node* p = node(child)->parent;
  if (!p || p == &root_) return {};
  return createIndex(p->row, 0, p);
}

int VersionTreeModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() && parent.column() != 0) return 0;
  return static_cast<int>(node(parent)->children.size());
}

int VersionTreeModel::columnCount(const QModelIndex&) const { return ColumnCount; }

Qt::ItemFlags VersionTreeModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable;
}

QVariant VersionTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn:
      return "Version";
    case OriginColumn:
      return "Origin";
    case BuildColumn:
      return "Build";
    case CorrectColumn:
      return "Correct";
    case SpeedupColumn:
      return "Speedup";
    case VerdictColumn:
      return "Verdict";
    case ExportColumn:
      return "Export";
  }
  return {};
}

QVariant VersionTreeModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const Node* n = node(index);
  if (n->group) {
    if (role == Qt::DisplayRole && index.column() == NameColumn)
      return QString::fromStdString(n->group->name);
    if (role == Qt::FontRole) {
      QFont f;
      f.setBold(true);
      return f;
    }
    return {};
  }
  if (role == Qt::DisplayRole && index.column() == NameColumn)
    return QString("#%1 · v%2").arg(n->number).arg(n->version->id);
  return versionData(*n->version, index.column(), role);
}

QVariant VersionTreeModel::versionData(const CandidateVersion& v, int column, int role) const {
  if (role == VersionIdRole) return QVariant::fromValue<qint64>(v.id);
  if (role == Qt::ToolTipRole && column == VerdictColumn && !v.verdict_sentence.empty())
    return QString::fromStdString(v.verdict_sentence);
  if (role == Qt::ToolTipRole) {
    QString tip = QString("v%1 (the project's version id) · %2 · created %3")
                      .arg(v.id)
                      .arg(QString::fromStdString(v.origin.describe()), QString::fromStdString(v.created_at));
    for (const auto& w : v.intake_warnings) tip += "\nintake warning: " + QString::fromStdString(w);
    return tip;
  }
  if (role == Qt::DecorationRole && column == NameColumn && !v.intake_warnings.empty())
    return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
  if (role == Qt::ForegroundRole) {
    if (column == BuildColumn && v.build_status == BuildStatus::failed) return QBrush(QColor("#c62828"));
    if (column == CorrectColumn && v.correct) return QBrush(QColor(*v.correct ? "#2e7d32" : "#c62828"));
    if (column == SpeedupColumn && v.speedup)
      return QBrush(QColor(*v.speedup >= 1.0 ? "#2e7d32" : "#c62828"));
    if (column == VerdictColumn && v.verdict == VerdictKind::ships) return QBrush(QColor("#2e7d32"));
    if (column == VerdictColumn && v.declined()) return QBrush(QColor("#c62828"));
    return {};
  }
  if (role == Qt::TextAlignmentRole && column == SpeedupColumn)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (column) {
    case NameColumn:
      return QString("v%1").arg(v.id);
    case OriginColumn:
      return QString::fromStdString(v.origin.describe());
    case BuildColumn:
      return v.build_status == BuildStatus::built    ? "built"
             : v.build_status == BuildStatus::failed ? "failed"
                                                     : "not built";
    case CorrectColumn:
      return v.correct ? (*v.correct ? "correct" : "wrong") : "—";
    case SpeedupColumn:
      return v.speedup ? QString("%1×").arg(*v.speedup, 0, 'f', 2) : QString("—");
    case VerdictColumn:
      return v.verdict
                 ? (*v.verdict == VerdictKind::unmeasured ? QString("no verdict")
                                                          : QString::fromStdString(to_string(*v.verdict)))
                 : QString("—");
    case ExportColumn:
      return v.chosen_for_export ? "chosen" : "";
  }
  return {};
}

}  // namespace nova::ui
