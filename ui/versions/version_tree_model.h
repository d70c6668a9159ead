#pragma once
// The version tree of every fusion group as a Qt item model: groups at the top, each version under
// the version it was derived from (builtin and first LLM versions directly under the group; a
// builtin alternative beside the primary it was written with, as its sibling). Versions are numbered
// within their group ("#2 · v14": the second of its group, project id 14). Columns show origin and
// status (build, correctness, speedup, benchmark verdict with its sentence as the
// tooltip, chosen for export). Used by VersionTreeView.
#include <QAbstractItemModel>

#include <memory>
#include <optional>
#include <vector>

#include "core/project/candidate_version.h"
#include "core/project/project_records.h"

namespace nova::ui {

class VersionTreeModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column {
    NameColumn,
    OriginColumn,
    BuildColumn,
    CorrectColumn,
    SpeedupColumn,
    VerdictColumn,
    ExportColumn,
    ColumnCount
  };
  static constexpr int VersionIdRole = Qt::UserRole + 1;  // qint64, or invalid on group rows

  explicit VersionTreeModel(QObject* parent = nullptr);
  ~VersionTreeModel() override;

  void setVersions(const std::vector<FusionGroupRecord>& groups,
                   const std::vector<CandidateVersion>& versions);
  std::optional<int64_t> versionId(const QModelIndex& index) const;
  QModelIndex indexOfVersion(int64_t id) const;
  const CandidateVersion* version(int64_t id) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

 private:
  struct Node {
    Node* parent = nullptr;
    int row = 0;
    int number = 0;  // a version's place in its group, oldest first: #1, #2, ...
    std::optional<FusionGroupRecord> group;
    std::optional<CandidateVersion> version;
    std::vector<Node*> children;
  };
  Node* node(const QModelIndex& index) const;
  QVariant versionData(const CandidateVersion& v, int column, int role) const;

  Node root_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

}  // namespace nova::ui
