// The studio's LLM panel (issue #23) on the offscreen platform, over a session with a scripted worker
// and the scripted loopback LLM server (tests/support/llm_server): "Send to LLM" runs the search as a
// job, the answer streams into the panel as it arrives, the candidate's row, the tokens and cost come
// from the project's records, and without a GPU the panel says plainly that the first candidate is
// stored and not evaluated; the candidate is in the version tree with its llm origin and diffs against
// its parent; Cancel ends a search whose answer never comes; the settings dialog edits the providers
// that `nova llm` reads, and the API key reaches the provider but no file.
#include "ui/llm/llm_panel.h"

#include <fstream>
#include <sstream>

#include <QApplication>
#include <QChart>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDockWidget>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>

#include <gtest/gtest.h>

#include "core/jobs/worker_run_error.h"
#include "core/llm/llm_search_store.h"
#include "scripted_sessions.h"
#include "support/llm_server/scripted_llm_server.h"
#include "support/test_paths.h"
#include "ui/diff/diff_view.h"
#include "ui/llm/llm_best_chart.h"
#include "ui/screenshot.h"
#include "ui/shell/main_window.h"
#include <QMessageBox>
#include <QPushButton>

#include "core/sandbox/sandbox_probe.h"
#include "core/sandbox/unsandboxed_consent.h"
#include "ui/shell/studio_session.h"
#include "ui/shell/settings_dialog.h"
#include "ui/versions/kernel_workspace.h"
#include "ui/versions/version_tree_model.h"
#include "ui/versions/version_tree_view.h"

namespace nova::ui {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using test::ScriptedSessions;

constexpr const char* kKey = "sk-studio-secret-4c1d8";
constexpr const char* kKeyVariable = "NOVA_UI_LLM_TEST_KEY";

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every file under `dir` whose bytes contain `needle`.
std::vector<std::string> filesContaining(const fs::path& dir, const std::string& needle) {
  std::vector<std::string> hits;
  if (!fs::exists(dir)) return hits;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && readAll(e.path()).find(needle) != std::string::npos) hits.push_back(e.path().string());
  return hits;
}

json intakeOnly(const std::string& model, const std::string& cmd, const json&, const WorkerCall&) {
  if (cmd == "intake") return ScriptedSessions::recordedIntake(model);
  throw WorkerRunError(WorkerRunError::Kind::BadRequest, "the test's worker does not run " + cmd);
}

class LlmPanelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir(std::string("llm_panel_") +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    setenv("NOVA_SETTINGS", (dir_ / "settings.json").c_str(), 1);
    setenv("NOVA_PROJECTS", (dir_ / "projects").c_str(), 1);
    setenv(kKeyVariable, kKey, 1);
  }
  void TearDown() override { unsetenv(kKeyVariable); }
  Settings settingsFor(const test::ScriptedLlmServer& server) const {
    LlmProvider p = server.provider(LlmProtocol::openai_chat);
    p.name = "scripted";
    p.api_key_env = kKeyVariable;
    p.usd_per_mtok_in = 3;
    p.usd_per_mtok_out = 15;
    Settings s;
    s.llm_providers = {p};
    s.llm_default_provider = "scripted";
    return s;
  }
  // Opens the model with a small search (1 lineage, 1 round) and waits for the builtin versions.
  void open(MainWindow& w) {
    w.llmPanel()->findChild<QSpinBox*>("llmLineages")->setValue(1);
    w.llmPanel()->findChild<QSpinBox*>("llmRounds")->setValue(1);
    QSignalSpy ready(&w, &MainWindow::candidatesReady);
    ASSERT_TRUE(w.openModel(QString::fromStdString(model_.string())));
    ASSERT_TRUE(ready.count() > 0 || ready.wait(60000));
    // Where the real sandbox cannot start (a container without user namespaces), the panel's tests run
    // with the project's consent; the refusal is tested with a bubblewrap that does not exist.
    if (sessions_.bwrap.empty() && !SandboxProbe::probe("bwrap").available)
      UnsandboxedConsent::set(w.studio()->session()->project_dir(), true);
  }
  fs::path dir_;
  fs::path model_ = test::shared_examples_dir() / "matmul_scaling_residual_add.py";
  ScriptedSessions sessions_{intakeOnly, "no GPU in this test"};
};

TEST_F(LlmPanelTest, WithoutAGpuTheAnswerStreamsTheCandidateIsStoredAndThePanelSaysSo) {
  const std::string answer = readAll(test::fixtures_dir() / "llm" / "slower.md");
  ASSERT_FALSE(answer.empty()) << "missing fixture tests/fixtures/llm/slower.md";
  test::ScriptedLlmServer server(
      {{"responses", json::array({{{"type", "openai"},
                                   {"text", answer},
                                   {"chunk", 40},
                                   {"delay_s", 0.02},
                                   {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 500}}}}})}},
      dir_ / "server");
  MainWindow w(settingsFor(server), sessions_.backend());
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  open(w);
  LlmPanel* panel = w.llmPanel();
  QSignalSpy ended(panel, &LlmPanel::searchEnded);
  auto* answerView = panel->findChild<QPlainTextEdit*>("llmAnswer");
  ASSERT_NE(answerView, nullptr);
  int updates = 0;
  QObject::connect(answerView, &QPlainTextEdit::textChanged, [&] { ++updates; });
  ASSERT_TRUE(w.sendToLlm(0)) << panel->status().toStdString();
  EXPECT_TRUE(panel->running());
  EXPECT_TRUE(panel->cancelButton()->isEnabled());
  // Text shows while the search still runs: it streams, it is not set once at the end.
  for (int i = 0; i < 600 && panel->answerText().isEmpty() && ended.isEmpty(); ++i) QTest::qWait(20);
  EXPECT_FALSE(panel->answerText().isEmpty());
  EXPECT_TRUE(panel->running());
  ASSERT_TRUE(ended.count() > 0 || ended.wait(120000)) << panel->status().toStdString();
  EXPECT_GT(updates, 5);

  EXPECT_EQ(ended[0][0].toString(), "no_gpu") << ended[0][1].toString().toStdString();
  EXPECT_TRUE(panel->status().startsWith("No GPU on this machine: the search stored its first candidate"))
      << panel->status().toStdString();
  EXPECT_FALSE(panel->cancelButton()->isEnabled());
  // The answer, as the server streamed it, under its round and lineage.
  const QString text = panel->answerText();
  EXPECT_TRUE(text.startsWith("── round 1 · lineage 1 ──")) << text.toStdString();
  EXPECT_TRUE(text.contains("extern \"C\" __global__ void linear_scale_rowwise")) << text.toStdString();
  // One row: the stored candidate, waiting for a GPU; its tokens and cost at the provider's prices.
  QTableWidget* rows = panel->candidates();
  ASSERT_EQ(rows->rowCount(), 1);
  EXPECT_EQ(rows->item(0, LlmPanel::RoundColumn)->text(), "1");
  EXPECT_EQ(rows->item(0, LlmPanel::OutcomeColumn)->text(), "pending");
  EXPECT_EQ(rows->item(0, LlmPanel::TokensColumn)->text(), "1500");
  const QString version = rows->item(0, LlmPanel::VersionColumn)->text();
  ASSERT_TRUE(version.startsWith("v")) << version.toStdString();
  EXPECT_TRUE(panel->totals().contains("Tokens so far: 1500")) << panel->totals().toStdString();
  EXPECT_TRUE(panel->totals().contains("$0.0105")) << panel->totals().toStdString();  // 1000*3e-6 + 500*15e-6
  EXPECT_EQ(panel->chart()->measuredCount(), 0);  // nothing timed without a GPU

  // The candidate is in the version tree with its llm origin, and diffs against its parent.
  const qint64 id = version.mid(1).toLongLong();
  VersionTreeView* tree = w.workspace()->versionTree();
  const CandidateVersion* v = tree->model()->version(id);
  ASSERT_NE(v, nullptr) << "v" << id << " is not in the version tree";
  EXPECT_EQ(v->origin.kind, OriginKind::llm);
  const QModelIndex origin = tree->model()->indexOfVersion(id).siblingAtColumn(VersionTreeModel::OriginColumn);
  EXPECT_TRUE(origin.data().toString().startsWith("llm: scripted/")) << origin.data().toString().toStdString();
  tree->selectVersions({id});
  tree->diffAgainstParent();
  if (v->parent_id) {
    EXPECT_TRUE(w.workspace()->diffView()->summary().size() > 0);
    EXPECT_EQ(w.workspace()->tabs()->currentWidget(), w.workspace()->diffView());
  } else {
    EXPECT_TRUE(tree->message().contains("has no parent version")) << tree->message().toStdString();
  }

  // The key reached the provider, and no file: not the settings, not the project.
  std::vector<json> requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_NE(requests[0]["headers"].dump().find(std::string("Bearer ") + kKey), std::string::npos)
      << requests[0]["headers"].dump();
  ASSERT_TRUE(fs::exists(dir_ / "settings.json"));
  EXPECT_EQ(readAll(dir_ / "settings.json").find(kKey), std::string::npos);
  EXPECT_NE(readAll(dir_ / "settings.json").find(kKeyVariable), std::string::npos);
  EXPECT_TRUE(filesContaining(dir_ / "projects", kKey).empty());

  w.findChild<QDockWidget*>("dock_llm")->raise();
  QTest::qWait(50);
  EXPECT_TRUE(test::save_screenshot(w, "llm_panel_no_gpu"));
  EXPECT_TRUE(test::save_screenshot(*panel, "llm_panel_no_gpu_dock"));
}

TEST_F(LlmPanelTest, CancelEndsASearchWhoseAnswerNeverComes) {
  test::ScriptedLlmServer server({{"responses", json::array({{{"type", "stall"}, {"seconds", 60}}})}}, dir_ / "server");
  MainWindow w(settingsFor(server), sessions_.backend());
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  open(w);
  w.findChild<QDockWidget*>("dock_llm")->raise();
  LlmPanel* panel = w.llmPanel();
  QSignalSpy ended(panel, &LlmPanel::searchEnded);
  ASSERT_TRUE(w.sendToLlm(0)) << panel->status().toStdString();
  // Wait for the request to reach the server, then cancel.
  for (int i = 0; i < 200 && server.requests().empty(); ++i) QTest::qWait(50);
  ASSERT_EQ(server.requests().size(), 1u);
  QTest::mouseClick(panel->cancelButton(), Qt::LeftButton);
  EXPECT_FALSE(panel->cancelButton()->isEnabled());
  ASSERT_TRUE(ended.wait(15000)) << "the search did not end after Cancel: " << panel->status().toStdString();
  EXPECT_EQ(ended[0][0].toString(), "stopped") << ended[0][1].toString().toStdString();
  EXPECT_TRUE(panel->status().contains("stopped")) << panel->status().toStdString();
  EXPECT_FALSE(panel->running());
}

TEST_F(LlmPanelTest, SendToLlmWithoutAProviderOrKeySaysWhatIsMissing) {
  MainWindow w(Settings{}, sessions_.backend());
  EXPECT_FALSE(w.sendToLlm(0));
  EXPECT_TRUE(w.llmPanel()->status().contains("Open a model first")) << w.llmPanel()->status().toStdString();
  open(w);
  EXPECT_FALSE(w.sendToLlm(0));
  EXPECT_TRUE(w.llmPanel()->status().contains("No LLM provider is set up")) << w.llmPanel()->status().toStdString();
  EXPECT_FALSE(w.llmPanel()->running());
}

TEST_F(LlmPanelTest, AnUnsetKeyVariableIsNamed) {
  test::ScriptedLlmServer server({{"responses", json::array()}}, dir_ / "server");
  Settings s = settingsFor(server);
  s.llm_providers[0].api_key_env = "NOVA_UI_LLM_TEST_UNSET_KEY";
  unsetenv("NOVA_UI_LLM_TEST_UNSET_KEY");
  MainWindow w(s, sessions_.backend());
  open(w);
  EXPECT_FALSE(w.sendToLlm(0));
  EXPECT_TRUE(w.llmPanel()->status().contains("NOVA_UI_LLM_TEST_UNSET_KEY")) << w.llmPanel()->status().toStdString();
  EXPECT_TRUE(server.requests().empty());
}

// Where the sandbox cannot start, Send to LLM asks before anything is sent: refused, nothing runs; allowed,
// the consent is stored in this project only and the search starts.
TEST_F(LlmPanelTest, WithoutASandboxTheStudioAsksAndTheConsentIsTheProjects) {
  const std::string answer = readAll(test::fixtures_dir() / "llm" / "slower.md");
  ASSERT_FALSE(answer.empty()) << "missing fixture tests/fixtures/llm/slower.md";
  test::ScriptedLlmServer server(
      {{"responses", json::array({{{"type", "openai"}, {"text", answer},
                                   {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 5}}}}})}},
      dir_ / "server");
  sessions_.bwrap = (dir_ / "no-such-bwrap").string();
  MainWindow w(settingsFor(server), sessions_.backend());
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  open(w);
  LlmPanel* panel = w.llmPanel();
  const fs::path project = w.studio()->session()->project_dir();

  EXPECT_FALSE(w.sendToLlm(0));
  auto* box = w.findChild<QMessageBox*>("unsandboxedPrompt");
  ASSERT_NE(box, nullptr);
  EXPECT_TRUE(panel->status().contains("refusing to run LLM-written code without the sandbox"))
      << panel->status().toStdString();
  box->button(QMessageBox::Cancel)->click();
  QTest::qWait(50);
  EXPECT_FALSE(UnsandboxedConsent::allowed(project));
  EXPECT_FALSE(panel->running());
  EXPECT_TRUE(server.requests().empty());

  QSignalSpy ended(panel, &LlmPanel::searchEnded);
  EXPECT_FALSE(w.sendToLlm(0));
  box = w.findChild<QMessageBox*>("unsandboxedPrompt");
  ASSERT_NE(box, nullptr);
  box->findChild<QPushButton*>("allowUnsandboxed")->click();
  EXPECT_TRUE(UnsandboxedConsent::allowed(project));
  ASSERT_TRUE(ended.count() > 0 || ended.wait(120000)) << panel->status().toStdString();
  EXPECT_EQ(ended[0][0].toString(), "no_gpu") << ended[0][1].toString().toStdString();
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(LlmBestChart, BestSoFarIsTheLowestTimeAtOrBeforeEachRound) {
  const auto best = LlmBestChart::bestSoFar({{2, 30.0}, {2, 20.0}, {3, 25.0}, {4, 12.5}}, 5);
  ASSERT_EQ(best.size(), 5u);
  EXPECT_FALSE(best[0]);
  EXPECT_EQ(best[1], 20.0);
  EXPECT_EQ(best[2], 20.0);
  EXPECT_EQ(best[3], 12.5);
  EXPECT_EQ(best[4], 12.5);
}

// The GPU box's search (a slower candidate at 279 us, the builtin at 12.3 us, the best at 9.4 us): on a
// linear axis the best and the bar merged at the bottom; the times span over a decade, so the axis is
// logarithmic and the best is drawn visibly below the bar. Times within a decade keep a linear axis.
TEST(LlmBestChart, TimesADecadeApartGoOnALogAxisSoTheBestAndTheBarSeparate) {
  LlmBestChart chart;
  chart.resize(640, 200);
  chart.show();
  chart.setPoints({{3, 278.82}, {3, 9.41}}, 12.29, 4, 4, "nothing");
  QApplication::processEvents();
  EXPECT_TRUE(chart.logScale());
  const QPointF best = chart.chart()->mapToPosition(QPointF(3, 9.41));
  const QPointF bar = chart.chart()->mapToPosition(QPointF(3, 12.29));
  EXPECT_GT(best.y() - bar.y(), 5) << "best " << best.y() << " bar " << bar.y();  // pixels apart, best below
  EXPECT_TRUE(test::save_screenshot(chart, "llm_best_chart_log"));
  chart.setPoints({{1, 20.0}, {2, 15.0}}, 12.0, 2, 4, "nothing");
  EXPECT_FALSE(chart.logScale());
}

TEST(LlmProviderSettings, TheDialogEditsTheProvidersAndNeverHoldsTheKey) {
  const fs::path dir = test::scratch_dir("llm_provider_settings");
  Settings given;
  LlmProvider p;
  p.name = "local";
  p.base_url = "http://127.0.0.1:8000/v1";
  p.model = "qwen-coder";
  p.api_key_env = "LOCAL_KEY";
  given.llm_providers = {p};
  given.llm_default_provider = "local";
  SettingsDialog d(given);
  auto* model = d.findChild<QLineEdit*>("llmModel");
  auto* url = d.findChild<QLineEdit*>("llmBaseUrl");
  auto* tokens = d.findChild<QSpinBox*>("llmMaxTokens");
  auto* temperature = d.findChild<QDoubleSpinBox*>("llmTemperature");
  auto* usdOut = d.findChild<QDoubleSpinBox*>("llmUsdOut");
  auto* key = d.findChild<QLineEdit*>("llmKey");
  ASSERT_TRUE(model && url && tokens && temperature && usdOut && key);
  EXPECT_EQ(model->text(), "qwen-coder");
  EXPECT_EQ(url->text(), "http://127.0.0.1:8000/v1");
  EXPECT_EQ(key->echoMode(), QLineEdit::Password);
  for (auto* combo : d.findChildren<QComboBox*>())
    for (int i = 0; i < combo->count(); ++i)
      EXPECT_FALSE(combo->itemText(i).contains("not available in this version")) << combo->itemText(i).toStdString();

  model->setText("qwen-coder-32b");
  tokens->setValue(4096);
  temperature->setValue(0.2);
  usdOut->setValue(1.5);
  key->setText("sk-typed-into-the-dialog");
  Settings out = d.settings();
  ASSERT_EQ(out.llm_providers.size(), 1u);
  EXPECT_EQ(out.llm_providers[0].model, "qwen-coder-32b");
  EXPECT_EQ(out.llm_providers[0].max_tokens, 4096);
  EXPECT_DOUBLE_EQ(out.llm_providers[0].temperature, 0.2);
  EXPECT_DOUBLE_EQ(out.llm_providers[0].usd_per_mtok_out, 1.5);
  EXPECT_EQ(out.llm_providers[0].api_key_env, "LOCAL_KEY");
  EXPECT_EQ(out.llm_default_provider, "local");
  out.save(dir / "settings.json");
  const std::string saved = readAll(dir / "settings.json");
  EXPECT_NE(saved.find("qwen-coder-32b"), std::string::npos);
  EXPECT_EQ(saved.find("sk-typed-into-the-dialog"), std::string::npos);

  d.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&d));
  EXPECT_TRUE(test::save_screenshot(d, "settings_llm_providers"));
}

}  // namespace
}  // namespace nova::ui
