#include "ui/versions/kernel_workspace.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QShortcut>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

#include "core/build/diagnostics.h"
#include "core/session/stored_generation.h"
#include "core/project/project_error.h"
#include "core/project/project_store.h"
#include "ui/diff/diff_view.h"
#include "ui/editor/cuda_editor.h"
#include "ui/editor/diagnostics_list.h"
#include "ui/editor/find_replace_bar.h"
#include "ui/versions/version_tree_view.h"

namespace nova::ui {

KernelWorkspace::KernelWorkspace(ProjectStore& store, QWidget* parent) : QWidget(parent), store_(store) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* split = new QSplitter(Qt::Horizontal, this);
  tree_ = new VersionTreeView(store, split);
  tabs_ = new QTabWidget(split);
  split->addWidget(tree_);
  split->addWidget(tabs_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 5);
  split->setSizes({480, 1020});  // wide enough for the tree's status columns
  layout->addWidget(split, 1);
  status_ = new QLabel(this);
  layout->addWidget(status_);

  auto* page = new QWidget(tabs_);
  auto* page_layout = new QVBoxLayout(page);
  page_layout->setContentsMargins(0, 0, 0, 0);
  auto* top = new QHBoxLayout;
  header_ = new QLabel(page);
  save_ = new QPushButton("Save as new version", page);
  save_->setToolTip("Stored versions never change: this stores a user edit of the version shown (Ctrl+S)");
  save_->setShortcut(QKeySequence::Save);
  top->addWidget(header_, 1);
  top->addWidget(save_);
  page_layout->addLayout(top);
  editor_ = new CudaEditor(page);
  find_ = new FindReplaceBar(editor_, page);
  find_->hide();
  page_layout->addWidget(find_);
  auto* vsplit = new QSplitter(Qt::Vertical, page);
  vsplit->addWidget(editor_);
  diagnostics_ = new DiagnosticsList(vsplit);
  vsplit->addWidget(diagnostics_);
  vsplit->setStretchFactor(0, 4);
  vsplit->setStretchFactor(1, 1);
  page_layout->addWidget(vsplit, 1);
  tabs_->addTab(page, "Editor");
  diff_ = new DiffView(tabs_);
  tabs_->addTab(diff_, "Diff");

  auto* find = new QShortcut(QKeySequence::Find, this, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
  connect(find, &QShortcut::activated, find_, &FindReplaceBar::focusFind);
  auto* replace = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_H), this, nullptr, nullptr,
                                Qt::WidgetWithChildrenShortcut);
  connect(replace, &QShortcut::activated, find_, &FindReplaceBar::focusReplace);
  connect(diagnostics_, &DiagnosticsList::lineActivated, editor_, &CudaEditor::goToLine);
  connect(editor_, &CudaEditor::modificationChanged, this, &KernelWorkspace::updateHeader);
  connect(save_, &QPushButton::clicked, this, [this] { saveEdit(); });
  connect(tree_, &VersionTreeView::versionActivated, this, [this](qint64 id) {
    if (hasUnsavedEdit() && id != current_) {
      auto answer = QMessageBox::question(
          this, "Unsaved edit",
          QString("The edit of v%1 is not saved. Save it as a new version first?").arg(*current_),
          QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
      if (answer == QMessageBox::Cancel) return;
      if (answer == QMessageBox::Save && !saveEdit()) return;
    }
    openVersion(id);
  });
  connect(tree_, &VersionTreeView::diffRequested, this, &KernelWorkspace::showDiff);
  updateHeader();
}

void KernelWorkspace::openVersion(qint64 id) {
  try {
    CandidateVersion v = store_.version(id);
    current_ = id;
    editor_->setText(QString::fromStdString(v.source));
    editor_->setModified(false);
    std::vector<Diagnostic> diagnostics;
    if (auto log = store_.latest_build_log(id)) diagnostics = parse_diagnostics(log->log);
    editor_->setDiagnostics(diagnostics);
    diagnostics_->setDiagnostics(diagnostics);
    tabs_->setCurrentIndex(0);
    tree_->selectVersions({id});
    status_->clear();
    emit versionShown(id);
  } catch (const ProjectError& e) {
    status_->setText(e.what());
  }
  updateHeader();
}

void KernelWorkspace::showStoredCandidates(qint64 preferred) {
  tree_->refresh();
  if (preferred) {
    openVersion(preferred);
    return;
  }
  for (const auto& rec : store_.fusion_groups())
    if (auto versions = store_.versions(rec.id); !versions.empty()) {
      openVersion(versions.back().id);
      return;
    }
}

QString KernelWorkspace::openGroup(int group) {
  for (const StoredGroup& g : stored_groups(store_)) {
    if (g.group.id != group) continue;
    auto versions = store_.versions(g.record_id);
    if (versions.empty()) {
      const bool declined = g.candidate && g.candidate->declined;
      return QString("The builtin generator declined group %1: %2")
          .arg(group)
          .arg(QString::fromStdString(declined ? *g.candidate->declined : std::string("no rule")));
    }
    openVersion(versions.back().id);
    return QString("Group %1: the builtin candidate is in the kernel editor.").arg(group);
  }
  return QString("No fusion group %1 in this project.").arg(group);
}

bool KernelWorkspace::hasUnsavedEdit() const { return current_ && editor_->isModified(); }

std::optional<qint64> KernelWorkspace::saveEdit() {
  if (!hasUnsavedEdit()) return std::nullopt;
  try {
    qint64 id = store_.add_user_edit(*current_, editor_->text().toStdString());
    qint64 parent = *current_;
    tree_->refresh();
    openVersion(id);
    status_->setText(QString("Saved as v%1 (a user edit of v%2).").arg(id).arg(parent));
    emit versionSaved(id);
    return id;
  } catch (const ProjectError& e) {
    status_->setText(QString("Not saved: %1").arg(e.what()));
    return std::nullopt;
  }
}

void KernelWorkspace::showDiff(qint64 left, qint64 right) {
  try {
    CandidateVersion a = store_.version(left), b = store_.version(right);
    auto title = [](const CandidateVersion& v) {
      return QString("v%1 · %2").arg(v.id).arg(QString::fromStdString(v.origin.describe()));
    };
    diff_->setTexts(title(a), QString::fromStdString(a.source), title(b), QString::fromStdString(b.source));
    tabs_->setCurrentWidget(diff_);
  } catch (const ProjectError& e) {
    status_->setText(e.what());
  }
}

QString KernelWorkspace::status() const { return status_->text(); }

void KernelWorkspace::updateHeader() {
  if (!current_) {
    header_->setText("Select a version in the tree to see its source.");
    save_->setEnabled(false);
    return;
  }
  bool modified = editor_->isModified();
  header_->setText(
      modified
          ? QString("<b>v%1</b> — edited; saving stores a new version, v%1 stays as it was").arg(*current_)
          : QString("<b>v%1</b> — stored version").arg(*current_));
  save_->setEnabled(modified);
}

}  // namespace nova::ui
