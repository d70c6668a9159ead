#include "ui/versions/version_tree_view.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QMetaMethod>
#include <QPushButton>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>

#include "core/project/project_error.h"
#include "core/project/project_store.h"
#include "ui/versions/version_tree_model.h"

namespace nova::ui {

VersionTreeView::VersionTreeView(ProjectStore& store, QWidget* parent)
    : QWidget(parent), store_(store), model_(new VersionTreeModel(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  tree_ = new QTreeView(this);
  tree_->setModel(model_);
  tree_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  tree_->setSelectionBehavior(QAbstractItemView::SelectRows);
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);
  tree_->header()->setStretchLastSection(false);
  layout->addWidget(tree_, 1);

  auto* buttons = new QHBoxLayout;
  diff_ = new QPushButton("Diff selected", this);
  diff_->setToolTip("Compare the two selected versions");
  validate_ = new QPushButton("Validate && benchmark", this);
  export_ = new QPushButton("Choose for export", this);
  buttons->addWidget(diff_);
  buttons->addWidget(validate_);
  buttons->addWidget(export_);
  buttons->addStretch();
  layout->addLayout(buttons);
  message_ = new QLabel(this);
  message_->setWordWrap(true);
  layout->addWidget(message_);

  connect(diff_, &QPushButton::clicked, this, &VersionTreeView::diffSelected);
  connect(validate_, &QPushButton::clicked, this, &VersionTreeView::validateSelected);
  connect(export_, &QPushButton::clicked, this, &VersionTreeView::chooseSelectedForExport);
  connect(tree_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &VersionTreeView::updateButtons);
  tree_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(tree_, &QTreeView::customContextMenuRequested, this, [this](const QPoint& pos) {
    auto id = model_->versionId(tree_->indexAt(pos));
    if (!id) return;
    selectVersions({*id});
    const CandidateVersion* v = model_->version(*id);
    QMenu menu(this);
    QAction* parentDiff = menu.addAction("Diff against parent", this, &VersionTreeView::diffAgainstParent);
    parentDiff->setEnabled(v && v->parent_id);
    menu.addAction("Send to LLM (search on its group)", this, [this, id] { emit sendToLlmRequested(*id); });
    menu.exec(tree_->viewport()->mapToGlobal(pos));
  });
  connect(tree_, &QTreeView::activated, this, [this](const QModelIndex& index) {
    if (auto id = model_->versionId(index)) emit versionActivated(*id);
  });
  refresh();
}

void VersionTreeView::refresh() {
  QList<qint64> selected = selectedVersions();
  model_->setVersions(store_.fusion_groups(), store_.all_versions());
  tree_->expandAll();
  for (int c = 0; c < VersionTreeModel::ColumnCount; ++c) tree_->resizeColumnToContents(c);
  selectVersions(selected);
  updateButtons();
}

void VersionTreeView::selectVersions(const QList<qint64>& ids) {
  QItemSelection selection;
  for (qint64 id : ids) {
    QModelIndex index = model_->indexOfVersion(id);
    if (index.isValid()) selection.select(index, index.siblingAtColumn(VersionTreeModel::ColumnCount - 1));
  }
  tree_->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
  if (!ids.isEmpty()) tree_->scrollTo(model_->indexOfVersion(ids.back()));
}

QList<qint64> VersionTreeView::selectedVersions() const {
  QList<qint64> ids;
  for (const QModelIndex& index : tree_->selectionModel()->selectedRows())
    if (auto id = model_->versionId(index)) ids << *id;
  std::sort(ids.begin(), ids.end());
  return ids;
}

QString VersionTreeView::message() const { return message_->text(); }
void VersionTreeView::setMessage(const QString& text) { message_->setText(text); }

void VersionTreeView::setGpuMissing(const QString& why) {
  gpuMissing_ = why;
  updateButtons();
}

QString VersionTreeView::exportProblem(qint64 id) const {
  try {
    const CandidateVersion v = store_.version(id);
    if (!v.correct) return QString("v%1 has not been validated yet: Validate & benchmark it first.").arg(id);
    if (!*v.correct) return QString("v%1 failed validation: it cannot be exported.").arg(id);
    if (!v.verdict) return QString("v%1 has no benchmark verdict against eager yet.").arg(id);
    const QString sentence = QString::fromStdString(v.verdict_sentence);
    if (*v.verdict == VerdictKind::declined)
      return QString("v%1 is slower than eager, eager is kept for its group: %2").arg(id).arg(sentence);
    if (*v.verdict == VerdictKind::tie)
      return QString("v%1 ties with eager (the 95% interval includes 1.0), not a win to export: %2")
          .arg(id)
          .arg(sentence);
    if (*v.verdict != VerdictKind::ships)
      return QString("v%1 has no verdict against eager (its benchmark lacks a cold or wall median): %2")
          .arg(id)
          .arg(sentence);
    return {};
  } catch (const ProjectError& e) {
    return QString::fromUtf8(e.what());
  }
}

void VersionTreeView::updateButtons() {
  const QList<qint64> ids = selectedVersions();
  const int n = static_cast<int>(ids.size());
  diff_->setEnabled(n == 2);
  validate_->setEnabled(n == 1 && gpuMissing_.isEmpty());
  validate_->setToolTip(gpuMissing_.isEmpty()
                            ? "Validate the selected version against eager, then benchmark it, as jobs"
                            : "Needs a GPU, and this machine has none: " + gpuMissing_);
  const QString problem = n == 1 ? exportProblem(ids[0]) : QString("Select one version.");
  export_->setEnabled(problem.isEmpty());
  export_->setToolTip(problem.isEmpty() ? "Export this version for its fusion group (passed, faster than eager)"
                                        : problem);
}

void VersionTreeView::diffSelected() {
  QList<qint64> ids = selectedVersions();
  if (ids.size() != 2) {
    setMessage("Select two versions to compare them.");
    return;
  }
  emit diffRequested(ids[0], ids[1]);  // older on the left
}

void VersionTreeView::diffAgainstParent() {
  QList<qint64> ids = selectedVersions();
  const CandidateVersion* v = ids.size() == 1 ? model_->version(ids[0]) : nullptr;
  if (!v) {
    setMessage("Select one version to compare it with its parent.");
    return;
  }
  if (!v->parent_id) {
    setMessage(QString("v%1 has no parent version: it was written from the group itself.").arg(v->id));
    return;
  }
  emit diffRequested(*v->parent_id, v->id);
}

void VersionTreeView::validateSelected() {
  QList<qint64> ids = selectedVersions();
  if (ids.size() != 1) return;
  if (!gpuMissing_.isEmpty()) {
    setMessage("Nothing was queued: validation and benchmarks need a GPU (" + gpuMissing_ + ").");
    return;
  }
  if (!isSignalConnected(QMetaMethod::fromSignal(&VersionTreeView::validateRequested))) {
    setMessage("Validation and benchmarking are not available in this build yet: nothing was run.");
    return;
  }
  // Whoever runs it says whether it was queued (the jobs panel and the status bar).
  setMessage({});
  emit validateRequested(ids[0]);
}

void VersionTreeView::chooseSelectedForExport() {
  QList<qint64> ids = selectedVersions();
  if (ids.size() != 1) return;
  if (QString problem = exportProblem(ids[0]); !problem.isEmpty()) {
    setMessage(problem);
    return;
  }
  try {
    store_.choose_for_export(ids[0]);
    refresh();
    setMessage(QString("v%1 will be exported for its fusion group.").arg(ids[0]));
  } catch (const ProjectError& e) {
    setMessage(QString("Could not save the choice: %1").arg(e.what()));
  }
}

}  // namespace nova::ui
