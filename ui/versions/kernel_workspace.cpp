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
#include "ui/versions/edit_builder.h"
#include "ui/versions/version_tree_view.h"

namespace nova::ui {

KernelWorkspace::KernelWorkspace(ProjectStore& store, QWidget* parent)
    : QWidget(parent), store_(store), builder_(new EditBuilder(store, "sm_90", this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  // The tree above the editor: the editor gets the dock's whole width, the tree its status columns.
  auto* split = new QSplitter(Qt::Vertical, this);
  tree_ = new VersionTreeView(store, split);
  tabs_ = new QTabWidget(split);
  split->addWidget(tree_);
  split->addWidget(tabs_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 3);
  split->setSizes({220, 660});
  tree_->setMinimumHeight(120);  // a few versions stay visible when the dock is short
  split->setChildrenCollapsible(false);
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
  build_ = new QPushButton("Build", page);
  build_->setToolTip(
      "Compile the version shown with NVRTC (no GPU needed; an unsaved edit is saved as a new version "
      "first): diagnostics at their lines and in the list below (Ctrl+B)");
  build_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
  top->addWidget(header_, 1);
  top->addWidget(build_);
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
  vsplit->setChildrenCollapsible(false);
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
  connect(build_, &QPushButton::clicked, this, &KernelWorkspace::buildCurrent);
  connect(builder_, &EditBuilder::started, this,
          [this](qint64 id) {
            const QString building = QString("Building v%1 with NVRTC…").arg(id);
            status_->setText(status_->text().isEmpty() ? building : status_->text() + " " + building);
          });
  connect(builder_, &EditBuilder::built, this, &KernelWorkspace::showBuild);
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

QString KernelWorkspace::openSelection(const QList<int>& ids, bool groups, const ModelGraph* graph) {
  if (ids.isEmpty()) return {};
  int group = ids.front();
  if (!groups && graph)
    if (const FusionGroup* g = graph->group_of(group)) group = g->id;
  return openGroup(group);
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
    // The primary candidate, not an alternative written beside it: the newest builtin version of
    // the rule the group's first builtin version has (a newer generator revision's primary descends
    // from it; alternatives have their own rule).
    const CandidateVersion* primary = nullptr;
    std::string rule;
    for (const auto& v : versions) {
      if (v.origin.kind != OriginKind::builtin) continue;
      if (!primary) rule = v.origin.rule;
      if (v.origin.rule == rule) primary = &v;
    }
    openVersion(primary ? primary->id : versions.back().id);
    return QString("Group %1: the builtin %2 candidate (v%3) is in the kernel editor.")
        .arg(group)
        .arg(QString::fromStdString(primary ? rule : std::string("latest")))
        .arg(primary ? primary->id : versions.back().id);
  }
  return QString("No fusion group %1 in this project.").arg(group);
}

void KernelWorkspace::buildCurrent() {
  if (hasUnsavedEdit()) {
    saveEdit();  // builds what it stored
    return;
  }
  if (current_) builder_->build(*current_);
}

void KernelWorkspace::showBuild(qint64 id, bool, const std::vector<Diagnostic>& diagnostics,
                                const QString& summary) {
  tree_->refresh();
  if (current_ != id) return;
  editor_->setDiagnostics(diagnostics);
  diagnostics_->setDiagnostics(diagnostics);
  status_->setText(summary);
  emit versionBuilt(id);
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
    builder_->build(id);  // every saved edit is compiled: "not built" never lingers
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
