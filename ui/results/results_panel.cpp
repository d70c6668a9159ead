#include "ui/results/results_panel.h"

#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include "core/session/project_evidence.h"
#include "ui/results/benchmark_chart.h"
#include "ui/results/correctness_table.h"
#include "ui/results/roofline_chart.h"

namespace nova::ui {
ResultsPanel::ResultsPanel(QWidget* parent) : QWidget(parent) {
  verdict_ = new QLabel(tr("No result yet: validate a candidate."));
  QFont f = verdict_->font();
  f.setBold(true);
  verdict_->setFont(f);
  verdict_->setWordWrap(true);
  flags_ = new QLabel;
  flags_->setWordWrap(true);
  benchmarkVerdict_ = new QLabel;
  benchmarkVerdict_->setFont(f);
  benchmarkVerdict_->setWordWrap(true);
  speedups_ = new QLabel;
  speedups_->setWordWrap(true);
  speedups_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  environment_ = new QLabel;
  environment_->setWordWrap(true);
  environment_->setStyleSheet("color: #666;");
  table_ = new CorrectnessTable;
  chart_ = new BenchmarkChart;
  auto* split = new QSplitter(Qt::Vertical);
  split->setChildrenCollapsible(false);  // a divider never hides a panel
  split->addWidget(table_);
  roofline_ = new RooflineChart;
  auto* charts = new QSplitter(Qt::Horizontal);
  charts->setChildrenCollapsible(false);
  charts->addWidget(chart_);
  charts->addWidget(roofline_);
  split->addWidget(charts);
  split->setSizes({300, 420});
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(verdict_);
  layout->addWidget(flags_);
  layout->addWidget(split, 1);
  layout->addWidget(benchmarkVerdict_);
  layout->addWidget(speedups_);
  layout->addWidget(environment_);
}

void ResultsPanel::clear(const QString& message) {
  version_.reset();
  verdict_->setText(message);
  verdict_->setStyleSheet({});
  flags_->clear();
  benchmarkVerdict_->clear();
  speedups_->clear();
  environment_->clear();
  table_->setResult(ValidationResult{});
  chart_->clear();
  roofline_->clear(tr("Roofline: not measured (no benchmark yet)"));
}

void ResultsPanel::showStored(const ProjectStore& store, qint64 version) {
  std::optional<ValidationResult> validation;
  std::optional<BenchmarkResult> benchmark;
  try {
    validation = ProjectEvidence::latest_validation(store, version);
    benchmark = ProjectEvidence::latest_benchmark(store, version);
  } catch (const std::exception& e) {
    clear(tr("The results of v%1 cannot be read: %2").arg(version).arg(e.what()));
    return;
  }
  clear(tr("v%1 has no result yet: Validate & benchmark it (needs a GPU).").arg(version));
  version_ = version;
  if (validation) setValidation(*validation);
  if (benchmark) setBenchmark(*benchmark);
  try {
    roofline_->showStored(store, version);
  } catch (const std::exception& e) {
    roofline_->clear(tr("Roofline: the group's results cannot be read: %1").arg(e.what()));
  }
}

QString ResultsPanel::verdictText() const { return verdict_->text(); }
QString ResultsPanel::speedupText() const { return speedups_->text(); }
QString ResultsPanel::methodText() const { return environment_->text(); }
QString ResultsPanel::benchmarkVerdictText() const { return benchmarkVerdict_->text(); }

void ResultsPanel::setValidation(const ValidationResult& r) {
  verdict_->setText(QString("%1 (%2 path): %3")
                        .arg(QString::fromStdString(r.candidate), QString::fromStdString(r.path),
                             QString::fromStdString(r.verdict)));
  verdict_->setStyleSheet(r.passed ? "color: #1e823c;" : "color: #be1e1e;");
  QStringList lines;
  for (const auto& fl : r.flags) lines << tr("Flag: ") + QString::fromStdString(fl);
  for (const auto& w : r.warnings) lines << tr("Warning: ") + QString::fromStdString(w);
  flags_->setText(lines.join("\n"));
  table_->setResult(r);
}

QString ResultsPanel::describeSpeedups(const BenchmarkResult& r) {
  QStringList out;
  for (const auto& s : r.speedups) {
    QString base = BenchmarkChart::variantLabel(s.baseline);
    QString how = s.value >= 1.0 ? tr("%1x faster than %2").arg(s.value, 0, 'f', 2).arg(base)
                                 : tr("%1x slower than %2").arg(1.0 / s.value, 0, 'f', 2).arg(base);
    out << QString("%1 (%2)").arg(how, BenchmarkChart::modeLabel(s.mode));
  }
  for (const auto& c : r.copy_shares)
    out << tr("At %1% of the speed of a copy of the same %2 MB (%3 us, %4 TB/s; %5)")
               .arg(100 * c.share(), 0, 'f', 0)
               .arg(c.bytes / 1e6, 0, 'f', 1)
               .arg(c.copy_us, 0, 'f', 2)
               .arg(c.copy_tb_per_s(), 0, 'f', 2)
               .arg(BenchmarkChart::modeLabel(c.mode));
  for (const auto& f : r.flags) out << tr("Flag: ") + QString::fromStdString(f);
  return out.join("\n");
}

void ResultsPanel::setBenchmark(const BenchmarkResult& r) {
  chart_->setResult(r);
  benchmarkVerdict_->setText(tr("Benchmark: %1").arg(QString::fromStdString(r.verdict.sentence)));
  benchmarkVerdict_->setStyleSheet(r.verdict.ships()                         ? "color: #1e823c;"
                                   : r.verdict.kind == VerdictKind::declined ? "color: #be1e1e;"
                                                                             : "color: #666;");
  speedups_->setText(describeSpeedups(r));
  const auto& e = r.environment;
  QString method =
      tr("Measured on %1, driver %2, CUDA %3, torch %4; %5 calls per variant, interleaved; "
         "median and IQR of raw samples.")
          .arg(QString::fromStdString(e.value("gpu", "?")), QString::fromStdString(e.value("driver", "?")),
               QString::fromStdString(e.value("cuda", "?")), QString::fromStdString(e.value("torch", "?")))
          .arg(r.method.value("calls", 0));
  if (auto flush = r.cold_flush_sentence(); !flush.empty())
    method += tr(" L2 flush: %1.").arg(QString::fromStdString(flush));
  environment_->setText(method);
}

}  // namespace nova::ui
