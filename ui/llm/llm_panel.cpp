#include "ui/llm/llm_panel.h"

#include <QColor>
#include <QDoubleSpinBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>

#include "core/llm/llm_feedback.h"
#include "core/llm/llm_search_store.h"
#include "core/session/project_session.h"
#include "core/session/stored_generation.h"
#include "ui/llm/llm_best_chart.h"
#include "ui/llm/llm_search_job.h"

namespace nova::ui {
namespace {

const char* outcomeColour(const std::string& outcome) {
  if (outcome == "best") return "#2e7d32";
  if (outcome == "pending") return "#8a6d00";
  if (outcome == "tie" || outcome == "slower" || outcome == "duplicate" || outcome == "unmeasured") return nullptr;
  return "#c62828";  // llm_error, no_code, refused, build_failed, wrong, crashed
}

}  // namespace

LlmPanel::LlmPanel(QWidget* parent) : QWidget(parent), job_(new LlmSearchJob(this)) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  title_ = new QLabel(tr("No LLM search yet: right-click a fusion group in the graph, a hot op or a version, "
                         "then Send to LLM."),
                      this);
  title_->setWordWrap(true);
  top->addWidget(title_, 1);
  lineages_ = new QSpinBox(this);
  lineages_->setObjectName("llmLineages");
  lineages_->setRange(1, 16);
  lineages_->setValue(LlmSearchOptions{}.lineages);
  lineages_->setPrefix(tr("lineages "));
  rounds_ = new QSpinBox(this);
  rounds_->setObjectName("llmRounds");
  rounds_->setRange(1, 50);
  rounds_->setValue(LlmSearchOptions{}.rounds);
  rounds_->setPrefix(tr("rounds "));
  // How patient the search is: rounds in a row without a better kernel before it stops (nova llm
  // --idle-rounds).
  idleRounds_ = new QSpinBox(this);
  idleRounds_->setObjectName("llmIdleRounds");
  idleRounds_->setRange(1, 50);
  idleRounds_->setValue(LlmSearchOptions{}.idle_rounds);
  idleRounds_->setPrefix(tr("stop after "));
  idleRounds_->setSuffix(tr(" idle"));
  idleRounds_->setToolTip(tr("Rounds in a row without a better kernel before the search stops"));
  budget_ = new QDoubleSpinBox(this);
  budget_->setObjectName("llmBudget");
  budget_->setRange(0, 1000);
  budget_->setDecimals(2);
  budget_->setPrefix(tr("budget $"));
  budget_->setSpecialValueText(tr("no $ budget"));
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setObjectName("llmCancel");
  cancel_->setEnabled(false);
  for (QWidget* w : std::initializer_list<QWidget*>{lineages_, rounds_, idleRounds_, budget_, cancel_}) top->addWidget(w);
  layout->addLayout(top);
  status_ = new QLabel(this);
  status_->setObjectName("llmStatus");
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(status_);

  auto* split = new QSplitter(Qt::Horizontal, this);
  text_ = new QPlainTextEdit(split);
  text_->setObjectName("llmAnswer");
  text_->setReadOnly(true);
  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  text_->setPlaceholderText(tr("The model's answer streams in here as it arrives."));
  // Table and chart side by side: the dock shares the bottom area with the timeline, so it stays low.
  auto* right = new QSplitter(Qt::Horizontal, split);
  table_ = new QTableWidget(0, 7, right);
  table_->setObjectName("llmCandidates");
  table_->setHorizontalHeaderLabels(
      {tr("Round"), tr("Lineage"), tr("Version"), tr("Outcome"), tr("Tokens"), tr("Cost $"), tr("Detail")});
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setMinimumHeight(80);  // two candidate rows stay visible
  auto* chartBox = new QWidget(right);
  auto* chartLayout = new QVBoxLayout(chartBox);
  chartLayout->setContentsMargins(0, 0, 0, 0);
  chart_ = new LlmBestChart(chartBox);
  totals_ = new QLabel(tr("Tokens so far: 0 · cost so far: $0.0000"), chartBox);
  totals_->setObjectName("llmTotals");
  chartLayout->addWidget(chart_, 1);
  chartLayout->addWidget(totals_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  right->setStretchFactor(0, 1);
  right->setStretchFactor(1, 1);
  layout->addWidget(split, 1);

  connect(cancel_, &QPushButton::clicked, this, &LlmPanel::cancel);
  connect(job_, &LlmSearchJob::said, this, &LlmPanel::onSaid);
  connect(job_, &LlmSearchJob::textArrived, this, &LlmPanel::onText);
  connect(job_, &LlmSearchJob::ended, this, &LlmPanel::onEnded);
  connect(job_, &LlmSearchJob::failed, this, &LlmPanel::onFailed);
}

LlmPanel::~LlmPanel() = default;

LlmSearchOptions LlmPanel::options() const {
  LlmSearchOptions o;
  o.lineages = lineages_->value();
  o.rounds = rounds_->value();
  o.idle_rounds = idleRounds_->value();
  if (budget_->value() > 0) o.usd_budget = budget_->value();
  return o;
}

void LlmPanel::setStatus(const QString& text, const char* colour) {
  status_->setText(text);
  status_->setStyleSheet(colour ? QString("color: %1; font-weight: bold").arg(colour) : QString());
}

void LlmPanel::showProblem(const QString& text) { setStatus(text, "#c62828"); }

bool LlmPanel::start(ProjectSession& session, const LlmProvider& provider, const std::string& key, int group,
                     const QString& gpuMissing) {
  if (running_) {
    showProblem(tr("An LLM search is running: cancel it before starting another."));
    return false;
  }
  auto graph = session.graph();
  const FusionGroup* fg = nullptr;
  if (graph)
    for (const auto& g : graph->groups)
      if (g.id == group) fg = &g;
  const std::vector<StoredGroup> stored = stored_groups(session.store());
  const StoredGroup* sg = fg ? find_stored_group(stored, *fg) : nullptr;
  if (!sg) {
    showProblem(fg ? tr("Group %1 has no builtin candidate yet (the bar): wait for the generator to finish.").arg(group)
                   : tr("The model has no fusion group %1.").arg(group));
    return false;
  }
  try {
    records_ = std::make_unique<LlmSearchStore>(session.project_dir());
  } catch (const std::exception& e) {
    showProblem(tr("The project's LLM records cannot be read: %1").arg(e.what()));
    return false;
  }
  session_ = &session;
  groupRecord_ = sg->record_id;
  bar_ = sg->newest_builtin;
  searchId_.reset();
  newestBefore_ = 0;
  for (const auto& s : records_->searches()) newestBefore_ = std::max(newestBefore_, s.id);
  if (auto unfinished = records_->unfinished_search(groupRecord_)) searchId_ = unfinished->id;
  storedVersions_ = 0;
  streaming_ = -1;
  gpuMissing_ = gpuMissing;
  text_->clear();
  table_->setRowCount(0);

  LlmSearchOptions o = options();
  o.can_evaluate = gpuMissing.isEmpty();
  o.guard_python = session.options().python;
  title_->setText(tr("Group %1 (%2) · %3 / %4%5")
                      .arg(group)
                      .arg(QString::fromStdString(fg->kind), QString::fromStdString(provider.name),
                           QString::fromStdString(provider.model),
                           searchId_ ? tr(" · resuming search %1").arg(*searchId_) : QString()));
  setStatus(gpuMissing.isEmpty()
                ? tr("Asking %1…").arg(QString::fromStdString(provider.name))
                : tr("Asking %1… No GPU here (%2): the first candidate will be stored, not evaluated.")
                      .arg(QString::fromStdString(provider.name), gpuMissing));
  running_ = true;
  cancel_->setEnabled(true);
  jobId_ = job_->start(session, provider, key, group, o);
  reload();
  return true;
}

void LlmPanel::cancel() {
  if (!running_ || !session_) return;
  session_->jobs().cancel(jobId_);
  cancel_->setEnabled(false);
  setStatus(tr("Cancelling: the answer under way is dropped; what is stored stays, and Send to LLM resumes it."));
}

void LlmPanel::detach() {
  running_ = false;
  session_ = nullptr;
  records_.reset();
  cancel_->setEnabled(false);
}

void LlmPanel::onSaid(const QString& line) {
  if (!running_) return;
  setStatus(line);
  reload();
}

void LlmPanel::onText(int lineage, int round, const QString& delta) {
  if (!running_) return;
  const bool atEnd = text_->verticalScrollBar()->value() == text_->verticalScrollBar()->maximum();
  QTextCursor end = text_->textCursor();
  end.movePosition(QTextCursor::End);
  if (streaming_ != lineage * 1000 + round) {
    streaming_ = lineage * 1000 + round;
    end.insertText(QString("%1── round %2 · lineage %3 ──\n").arg(text_->document()->isEmpty() ? QString() : QString("\n")).arg(round).arg(lineage));
  }
  end.insertText(delta);
  if (atEnd) text_->verticalScrollBar()->setValue(text_->verticalScrollBar()->maximum());
}

void LlmPanel::onEnded(const QString& state, const QString& reason, qint64 searchId) {
  if (!running_) return;
  if (searchId > 0) searchId_ = searchId;
  reload();
  if (state == "finished")
    finish(state, tr("Search %1 finished: %2").arg(searchId).arg(reason));
  else if (state == "stopped")
    finish(state, tr("Search %1 stopped (%2). What it stored stays; Send to LLM again resumes it.").arg(searchId).arg(reason));
  else
    finish(state, tr("Search %1 failed: %2").arg(searchId).arg(reason));
}

void LlmPanel::onFailed(const QString& message, bool noGpu) {
  if (!running_) return;
  reload();
  if (!noGpu) {
    finish("failed", tr("The LLM search failed: %1").arg(message));
    return;
  }
  QString stored;
  if (records_ && searchId_)
    for (const auto& c : records_->candidates(*searchId_))
      if (c.version_id && c.outcome == "pending") stored += (stored.isEmpty() ? "v" : ", v") + QString::number(*c.version_id);
  finish("no_gpu",
         tr("No GPU on this machine: the search stored its first candidate%1 in the version tree and stopped "
            "before evaluating it. Run it where there is a GPU (Send to LLM there, or nova llm) to evaluate it "
            "and go on. (%2)")
             .arg(stored.isEmpty() ? QString() : " (" + stored + ")", message));
}

void LlmPanel::jobChanged(const JobInfo& info) {
  if (!running_ || info.id != jobId_ || !is_finished(info.state)) return;
  // The job ended without the search saying how (cancelled before it started, superseded).
  finish(QString::fromStdString(to_string(info.state)),
         tr("The LLM search job ended: %1 %2").arg(QString::fromStdString(to_string(info.state)),
                                                   QString::fromStdString(info.error)));
}

void LlmPanel::finish(const QString& state, const QString& message) {
  running_ = false;
  cancel_->setEnabled(false);
  const bool bad = state == "failed" || state == "no_gpu";
  setStatus(message, bad ? (state == "no_gpu" ? "#8a6d00" : "#c62828") : nullptr);
  emit searchEnded(state, message);
}

void LlmPanel::reload() {
  if (!records_ || !session_) return;
  if (!searchId_)
    for (const auto& s : records_->searches())
      if (s.id > newestBefore_ && s.group_record_id == groupRecord_) searchId_ = s.id;
  if (!searchId_) return;
  const std::vector<LlmCandidateRecord> rows = records_->candidates(*searchId_);
  table_->setRowCount(static_cast<int>(rows.size()));
  long long tokens = 0;
  double cost = 0;
  int versions = 0, lastRound = 1;
  std::vector<LlmBestChart::Point> measured;
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const LlmCandidateRecord& c = rows[i];
    tokens += c.tokens_in + c.tokens_out;
    cost += c.cost_usd;
    lastRound = std::max(lastRound, c.round);
    if (c.version_id) {
      ++versions;
      if (auto us = LlmEvaluation::read(session_->store(), *c.version_id).cold_us()) measured.push_back({c.round, *us});
    }
    const QStringList cells = {QString::number(c.round),
                               QString::number(c.lineage),
                               c.version_id ? QString("v%1").arg(*c.version_id) : QString("—"),
                               QString::fromStdString(c.outcome),
                               QString::number(c.tokens_in + c.tokens_out),
                               QString::number(c.cost_usd, 'f', 4),
                               QString::fromStdString(c.detail)};
    for (int col = 0; col < cells.size(); ++col) {
      auto* item = new QTableWidgetItem(cells[col]);
      if (col == OutcomeColumn)
        if (const char* colour = outcomeColour(c.outcome)) item->setForeground(QColor(colour));
      if (col == DetailColumn) item->setToolTip(cells[col]);
      table_->setItem(i, col, item);
    }
  }
  table_->resizeColumnsToContents();
  std::optional<double> bar;
  if (bar_) bar = LlmEvaluation::read(session_->store(), *bar_).cold_us();
  chart_->setPoints(measured, bar, lastRound, rounds_->value(),
                    gpuMissing_.isEmpty() ? tr("Not measured yet: no candidate evaluated")
                                          : tr("Not measured: no GPU here to time the candidates"));
  totals_->setText(tr("Tokens so far: %1 · cost so far: $%2").arg(tokens).arg(cost, 0, 'f', 4));
  if (versions > storedVersions_) {
    storedVersions_ = versions;
    emit versionsStored();
  }
}

QString LlmPanel::answerText() const { return text_->toPlainText(); }
QString LlmPanel::status() const { return status_->text(); }
QString LlmPanel::totals() const { return totals_->text(); }

}  // namespace nova::ui
