// The version tree and the kernel workspace over a real project store: the model passes
// QAbstractItemModelTester, the buttons diff, refuse to fake a validation, and choose for export;
// saving an edit creates a user-edit version whose parent is the edited one.
#include "ui/versions/kernel_workspace.h"

#include <QAbstractItemModelTester>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>
#include <QTreeView>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/project/project_store.h"
#include "support/test_paths.h"
#include "ui/diff/diff_view.h"
#include "ui/editor/cuda_editor.h"
#include "ui/editor/diagnostics_list.h"
#include "ui/screenshot.h"
#include "ui/versions/version_tree_model.h"
#include "ui/versions/version_tree_view.h"

namespace nova::ui {
namespace {

std::string fixture_text(const std::string& name) {
  std::ifstream in(test::fixtures_dir() / name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A project with one fusion group: a builtin seed (built, correct, 1.4x), an LLM round derived from
// it that failed to build with the recorded NVRTC log, and a user edit of the LLM version.
struct Project {
  explicit Project(const std::string& name) : store(ProjectStore::create(test::scratch_dir(name) / "p")) {
    group = store.add_fusion_group({0, "conv2d → min → add → multiply", "{}"});
    CandidateVersion seed;
    seed.group_id = group;
    seed.origin = {OriginKind::builtin, "epilogue_fusion", "", "", 0};
    seed.source = fixture_text("reference_kernels/conv2d_min_add_multiply.seed.cu");
    v1 = store.add_version(seed);
    store.add_build_log({0, v1, "nvrtc", true, "", ""});
    store.add_result({0, v1, "validation", "{}", ""}, true, std::nullopt);
    store.add_result({0, v1, "benchmark", "{}", ""}, std::nullopt, 1.4);
    CandidateVersion llm;
    llm.group_id = group;
    llm.parent_id = v1;
    llm.origin = {OriginKind::llm, "", "anthropic", "claude-sonnet", 1};
    llm.source = fixture_text("diagnostics/broken_kernel.cu");
    v2 = store.add_version(llm);
    store.add_build_log({0, v2, "nvrtc", false, fixture_text("diagnostics/nvrtc_broken_kernel.log"), ""});
    v3 = store.add_user_edit(v2, llm.source + "// fixed later\n");
  }
  ProjectStore store;
  int64_t group = 0, v1 = 0, v2 = 0, v3 = 0;
};

TEST(VersionTreeModel, PassesTheModelTesterAndNestsVersionsUnderTheirParents) {
  Project p("tree_model");
  VersionTreeModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setVersions(p.store.fusion_groups(), p.store.all_versions());
  ASSERT_EQ(model.rowCount(), 1);
  QModelIndex group = model.index(0, 0);
  ASSERT_EQ(model.rowCount(group), 1);  // only the seed sits directly under the group
  QModelIndex v1 = model.index(0, 0, group);
  EXPECT_EQ(model.versionId(v1), p.v1);
  QModelIndex v2 = model.index(0, 0, v1);
  EXPECT_EQ(model.versionId(v2), p.v2);
  QModelIndex v3 = model.index(0, 0, v2);
  EXPECT_EQ(model.versionId(v3), p.v3);
  EXPECT_EQ(model.parent(v3), v2);
  EXPECT_EQ(model.data(v1.siblingAtColumn(VersionTreeModel::OriginColumn)).toString(),
            "builtin: epilogue_fusion");
  EXPECT_EQ(model.data(v1.siblingAtColumn(VersionTreeModel::CorrectColumn)).toString(), "correct");
  EXPECT_EQ(model.data(v1.siblingAtColumn(VersionTreeModel::SpeedupColumn)).toString(), "1.40×");
  EXPECT_EQ(model.data(v2.siblingAtColumn(VersionTreeModel::BuildColumn)).toString(), "failed");
  EXPECT_EQ(model.data(v2.siblingAtColumn(VersionTreeModel::OriginColumn)).toString(),
            "llm: anthropic/claude-sonnet round 1");
  EXPECT_EQ(model.data(v3.siblingAtColumn(VersionTreeModel::OriginColumn)).toString(), "user edit");
  EXPECT_EQ(model.indexOfVersion(p.v3), v3);
  // A reset with more data keeps the tester satisfied.
  p.store.add_user_edit(p.v1, "edit of the seed");
  model.setVersions(p.store.fusion_groups(), p.store.all_versions());
  EXPECT_EQ(model.rowCount(model.index(0, 0, model.index(0, 0))), 2);
}

TEST(VersionTreeModel, NumbersVersionsPerGroupAndPutsAnAlternativeBesideItsPrimary) {
  Project p("tree_alternative");
  CandidateVersion alternative;
  alternative.group_id = p.group;
  alternative.parent_id = p.v1;  // stored under the primary it was written with
  alternative.origin = {OriginKind::builtin, "gemm_tf32x3", "", "", 0};
  alternative.source = "// tensor cores\n";
  const int64_t alt = p.store.add_version(alternative);
  VersionTreeModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setVersions(p.store.fusion_groups(), p.store.all_versions());
  QModelIndex group = model.index(0, 0);
  ASSERT_EQ(model.rowCount(group), 2);  // the primary and its alternative, siblings
  EXPECT_EQ(model.versionId(model.index(0, 0, group)), p.v1);
  EXPECT_EQ(model.versionId(model.index(1, 0, group)), alt);
  EXPECT_EQ(model.data(model.index(0, 0, group)).toString(), QString("#1 · v%1").arg(p.v1));
  EXPECT_EQ(model.data(model.index(1, 0, group)).toString(), QString("#4 · v%1").arg(alt));
  EXPECT_EQ(model.rowCount(model.index(0, 0, group)), 1);  // the LLM round still derives from v1
}

TEST(VersionTreeView, ButtonsDiffRefuseToFakeValidationAndChooseForExport) {
  Project p("tree_view");
  VersionTreeView view(p.store);
  QSignalSpy diffs(&view, &VersionTreeView::diffRequested);
  view.selectVersions({p.v3, p.v1});
  view.diffSelected();
  ASSERT_EQ(diffs.count(), 1);
  EXPECT_EQ(diffs.at(0).at(0).toLongLong(), p.v1);
  EXPECT_EQ(diffs.at(0).at(1).toLongLong(), p.v3);

  view.selectVersions({p.v2});
  view.validateSelected();  // nothing connected yet
  EXPECT_EQ(view.message(),
            "Validation and benchmarking are not available in this build yet: nothing was run.");
  QSignalSpy validations(&view, &VersionTreeView::validateRequested);
  view.validateSelected();
  ASSERT_EQ(validations.count(), 1);
  EXPECT_EQ(validations.at(0).at(0).toLongLong(), p.v2);
  EXPECT_FALSE(view.message().contains("requested"));  // queued or not, the jobs side says so

  // Without a GPU the button is off, says why, and nothing is emitted.
  view.setGpuMissing("no CUDA device");
  EXPECT_FALSE(view.validateButton()->isEnabled());
  EXPECT_TRUE(view.validateButton()->toolTip().contains("no CUDA device"));
  view.validateSelected();
  EXPECT_EQ(validations.count(), 1);
  EXPECT_TRUE(view.message().startsWith("Nothing was queued")) << view.message().toStdString();

  // Export only for a version that passed and ships: not before validation, not without a verdict.
  view.selectVersions({p.v3});
  EXPECT_FALSE(view.exportButton()->isEnabled());
  view.chooseSelectedForExport();
  EXPECT_FALSE(p.store.version(p.v3).chosen_for_export);
  EXPECT_TRUE(view.message().contains("not been validated")) << view.message().toStdString();
  view.selectVersions({p.v1});  // passed, benchmarked before verdicts existed
  EXPECT_FALSE(view.exportButton()->isEnabled());
  EXPECT_TRUE(view.exportButton()->toolTip().contains("no benchmark verdict"));
  auto verdict = [](VerdictKind kind, const char* sentence) {
    BenchmarkVerdict v;
    v.kind = kind;
    v.sentence = sentence;
    return v;
  };
  // (A tie cannot be stored yet: the schema's CHECK on candidate_versions.verdict lacks 'tie'.)
  p.store.add_result({0, p.v1, "benchmark", "{}", ""}, std::nullopt, 1.01,
                     verdict(VerdictKind::unmeasured, "no verdict: the run has no cold median"));
  view.refresh();
  EXPECT_FALSE(view.exportButton()->isEnabled());
  EXPECT_TRUE(view.exportButton()->toolTip().contains("has no verdict against eager"));
  const BenchmarkVerdict ships = verdict(VerdictKind::ships, "ships: cold 1.40x [1.35, 1.45]");
  p.store.add_result({0, p.v1, "benchmark", "{}", ""}, std::nullopt, 1.4, ships);
  p.store.add_result({0, p.v3, "validation", "{}", ""}, true, std::nullopt);
  p.store.add_result({0, p.v3, "benchmark", "{}", ""}, std::nullopt, 1.5, ships);
  view.refresh();
  ASSERT_TRUE(view.exportButton()->isEnabled());
  view.chooseSelectedForExport();
  EXPECT_TRUE(p.store.version(p.v1).chosen_for_export);
  view.selectVersions({p.v3});
  view.chooseSelectedForExport();
  EXPECT_FALSE(p.store.version(p.v1).chosen_for_export);
  EXPECT_TRUE(ProjectStore::open(p.store.folder()).version(p.v3).chosen_for_export);
  QModelIndex v3 = view.model()->indexOfVersion(p.v3);
  EXPECT_EQ(view.model()->data(v3.siblingAtColumn(VersionTreeModel::ExportColumn)).toString(), "chosen");
  EXPECT_EQ(view.selectedVersions(), QList<qint64>{p.v3});  // the refresh kept the selection
}

TEST(VersionTreeView, ShowsADeclinedVersionWithItsSentenceAndDoesNotChooseItForExport) {
  Project p("tree_declined");
  BenchmarkVerdict declined;
  declined.kind = VerdictKind::declined;
  declined.sentence = "declined: slower than eager (cold 0.99x, wall 0.96x); eager is kept for this group";
  p.store.add_result({0, p.v3, "benchmark", "{}", ""}, std::nullopt, 0.99, declined);
  VersionTreeView view(p.store);
  QModelIndex v3 = view.model()->indexOfVersion(p.v3).siblingAtColumn(VersionTreeModel::VerdictColumn);
  EXPECT_EQ(view.model()->data(v3).toString(), "declined");
  EXPECT_EQ(view.model()->data(v3, Qt::ToolTipRole).toString().toStdString(), declined.sentence);
  QModelIndex v1 = view.model()->indexOfVersion(p.v1).siblingAtColumn(VersionTreeModel::VerdictColumn);
  EXPECT_EQ(view.model()->data(v1).toString(), "—");  // benchmarked before verdicts existed
  p.store.add_result({0, p.v3, "validation", "{}", ""}, true, std::nullopt);
  view.refresh();
  view.selectVersions({p.v3});
  EXPECT_FALSE(view.exportButton()->isEnabled());
  view.chooseSelectedForExport();
  EXPECT_FALSE(p.store.version(p.v3).chosen_for_export);
  EXPECT_TRUE(view.message().contains(QString::fromStdString(declined.sentence)))
      << view.message().toStdString();
}

TEST(KernelWorkspace, EditingAVersionSavesANewUserEditAndLeavesTheOriginal) {
  Project p("workspace_edit");
  KernelWorkspace ws(p.store);
  ws.openVersion(p.v2);
  EXPECT_EQ(ws.diagnosticsList()->topLevelItemCount(), 3);  // from the stored NVRTC log
  EXPECT_EQ(ws.editor()->markersAtLine(8), 1u << CudaEditor::ErrorMarker);
  EXPECT_FALSE(ws.hasUnsavedEdit());
  EXPECT_FALSE(ws.saveEdit());

  std::string original = p.store.version(p.v2).source;
  ws.editor()->setSelection(8, 0, 8, ws.editor()->text(8).length() - 1);
  ws.editor()->replaceSelectedText("  v = v + bias[idx % 64];");
  EXPECT_TRUE(ws.hasUnsavedEdit());
  QSignalSpy saved(&ws, &KernelWorkspace::versionSaved);
  auto id = ws.saveEdit();
  ASSERT_TRUE(id);
  EXPECT_EQ(saved.count(), 1);
  CandidateVersion edit = p.store.version(*id);
  EXPECT_EQ(edit.origin.kind, OriginKind::user_edit);
  EXPECT_EQ(edit.parent_id, p.v2);
  EXPECT_NE(edit.source.find("bias[idx % 64]"), std::string::npos);
  EXPECT_EQ(p.store.version(p.v2).source, original);  // the stored version did not change
  EXPECT_EQ(ws.currentVersion(), *id);
  EXPECT_FALSE(ws.hasUnsavedEdit());
  EXPECT_TRUE(ws.status().startsWith(QString("Saved as v%1 (a user edit of v%2).").arg(*id).arg(p.v2)))
      << ws.status().toStdString();
  EXPECT_TRUE(ws.versionTree()->model()->indexOfVersion(*id).isValid());

  ws.showDiff(p.v2, *id);
  EXPECT_EQ(ws.tabs()->currentWidget(), ws.diffView());
  EXPECT_EQ(ws.diffView()->currentRow(), 8);
}

TEST(KernelWorkspace, BuildCompilesAnEditWithNvrtcAndPutsTheDiagnosticsAtTheirLines) {
  Project p("workspace_build");
  const int64_t broken = p.store.add_user_edit(
      p.v1, "extern \"C\" __global__ void k(float* y) {\n  y[threadIdx.x] = undeclared_x;\n}\n");
  KernelWorkspace ws(p.store);
  ws.openVersion(broken);
  QSignalSpy built(&ws, &KernelWorkspace::versionBuilt);
  ws.buildCurrent();  // no GPU needed
  ASSERT_TRUE(built.wait(120000));
  EXPECT_EQ(built.first().at(0).toLongLong(), broken);
  EXPECT_EQ(p.store.version(broken).build_status, BuildStatus::failed);
  ASSERT_GE(ws.diagnosticsList()->topLevelItemCount(), 1);
  EXPECT_EQ(ws.editor()->markersAtLine(1) & (1u << CudaEditor::ErrorMarker), 1u << CudaEditor::ErrorMarker);
  EXPECT_TRUE(ws.status().contains("failed to build")) << ws.status().toStdString();

  // The fix, saved, is built at once: a new version that builds.
  ws.editor()->setSelection(1, 0, 1, ws.editor()->text(1).length() - 1);
  ws.editor()->replaceSelectedText("  y[threadIdx.x] = 1.0f;");
  auto fixed = ws.saveEdit();
  ASSERT_TRUE(fixed);
  ASSERT_TRUE(built.wait(120000));
  EXPECT_EQ(built.last().at(0).toLongLong(), *fixed);
  EXPECT_EQ(p.store.version(*fixed).build_status, BuildStatus::built);
  EXPECT_EQ(ws.diagnosticsList()->topLevelItemCount(), 0);
  EXPECT_TRUE(ws.status().contains("built with NVRTC")) << ws.status().toStdString();
}

TEST(KernelWorkspace, Screenshots) {
  Project p("workspace_shot");
  KernelWorkspace ws(p.store);
  ws.resize(1500, 800);
  ws.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&ws));
  ws.openVersion(p.v2);
  QCoreApplication::processEvents();
  EXPECT_TRUE(test::save_screenshot(ws, "kernel_workspace_editor"));
  ws.versionTree()->selectVersions({p.v2, p.v3});
  ws.versionTree()->diffSelected();
  QCoreApplication::processEvents();
  EXPECT_TRUE(test::save_screenshot(ws, "kernel_workspace_diff"));
}

}  // namespace
}  // namespace nova::ui
