#include "ui/export/export_summary_page.h"

#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "ui/export/export_options_page.h"
#include "ui/export/export_wizard.h"

namespace nova::ui {
namespace {

QString ratio(const ExportGroup& g, const char* mode) {
  if (g.benchmark)
    for (const auto& s : g.benchmark->speedups)
      if (s.mode == mode && s.baseline == "eager") return QString::number(s.value, 'f', 2) + "x";
  return "–";
}

QString esc(const std::string& text) { return QString::fromStdString(text).toHtmlEscaped(); }

QString table(const ExportPlan& plan) {
  QString ships, stays;
  for (const auto& g : plan.groups) {
    if (g.ships())
      ships += QString("<tr><td>%1</td><td>%2</td><td>v%3</td><td>%4</td><td align='right'>%5</td>"
                       "<td align='right'>%6</td></tr>")
                   .arg(g.group_id)
                   .arg(esc(g.kind))
                   .arg(*g.version_id)
                   .arg(esc(g.rule))
                   .arg(ratio(g, "cold"), ratio(g, "wall"));
    else
      stays += QString("<tr><td>%1</td><td>%2</td><td colspan='4'>%3</td></tr>").arg(g.group_id).arg(esc(g.kind), esc(g.reason));
  }
  const QString head = "<table cellspacing='0' cellpadding='3' border='1' style='border-collapse:collapse' width='100%'>";
  QString html = QObject::tr("<p><b>Ships kernels</b> (%1 of %2 fusion groups)</p>").arg(plan.shipped()).arg(plan.groups.size());
  if (!ships.isEmpty())
    html += head + QObject::tr("<tr><th>Group</th><th>Kind</th><th>Version</th><th>Rule</th><th>Cold vs eager</th>"
                               "<th>Wall vs eager</th></tr>") + ships + "</table>";
  if (!stays.isEmpty())
    html += QObject::tr("<p><b>Stays PyTorch</b> (the client's original code)</p>") + head +
            QObject::tr("<tr><th>Group</th><th>Kind</th><th colspan='4'>Why</th></tr>") + stays + "</table>";
  return html;
}

QString amdahl(const ModelFigures& m) {
  if (!m.amdahl_vs_eager) return QObject::tr("<p><b>Whole model:</b> no estimate (no group has a measured share of the GPU time).</p>");
  QString from = m.shares_from == "profile"
                     ? QObject::tr("the profile's GPU time shares, covering %1% of the model's GPU time")
                           .arg(qRound(m.covered_share * 100))
                     : QObject::tr("the groups' eager times");
  return QObject::tr("<p><b>Whole model:</b> about <b>%1x</b> over eager (Amdahl's estimate from %2). The "
                     "whole model is measured on a GPU by <tt>nova check-package</tt> (or the package's benchmark.py).</p>")
      .arg(QString::number(*m.amdahl_vs_eager, 'f', 2), from);
}

}  // namespace

ExportSummaryPage::ExportSummaryPage(ExportWizard& wizard) : wizard_(wizard) {
  setTitle(tr("Summary"));
  setSubTitle(tr("What the package will hold. Export writes it in the background (see the Jobs panel)."));
  setCommitPage(true);
  auto* layout = new QVBoxLayout(this);
  summary_ = new QTextBrowser(this);
  summary_->setOpenLinks(false);
  layout->addWidget(summary_, 1);
  layout->addWidget(new QLabel(tr("The same export from a terminal:"), this));
  command_ = new QPlainTextEdit(this);
  command_->setReadOnly(true);
  command_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  command_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  command_->setWordWrapMode(QTextOption::WrapAnywhere);
  command_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // the whole line in view, paths and all
  command_->setFixedHeight(command_->fontMetrics().lineSpacing() * 4 + 16);
  auto* copy = new QPushButton(tr("&Copy"), this);
  auto* row = new QHBoxLayout;
  row->addWidget(command_, 1);
  row->addWidget(copy, 0, Qt::AlignTop);
  layout->addLayout(row);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  layout->addWidget(note_);
  connect(copy, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(command_->toPlainText()); });
}

void ExportSummaryPage::initializePage() {
  command_->setPlainText(wizard_.commandLine());
  try {
    const ExportPlan plan = wizard_.preview();
    summary_->setHtml(QString("<p>Package <b>%1</b> for %2, built for <code>%3</code>, written to <code>%4</code>.</p>")
                          .arg(esc(plan.package_name), esc(plan.model_path.filename().string()), esc(plan.arch_list),
                               wizard_.optionsPage()->outFolder().toHtmlEscaped()) +
                      table(plan) + amdahl(wizard_.choices().figures()));
    ok_ = true;
  } catch (const std::exception& e) {
    summary_->setHtml(tr("<p style='color:#b00020'><b>This export cannot be made:</b> %1</p>")
                          .arg(QString::fromUtf8(e.what()).toHtmlEscaped()));
    ok_ = false;
  }
  bool chosenHere = false;
  for (const auto& g : wizard_.choices().groups()) chosenHere |= g.selected != g.planned;
  note_->setText(chosenHere ? tr("The versions you chose here are stored as their groups' choice for export when "
                                 "the export starts, so this command makes the same package.")
                            : QString());
  note_->setVisible(chosenHere);
  emit completeChanged();
}

bool ExportSummaryPage::isComplete() const { return ok_; }

}  // namespace nova::ui
