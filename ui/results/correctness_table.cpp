#include "ui/results/correctness_table.h"

#include <cmath>

#include <QHeaderView>

namespace nova::ui {
namespace {
QString err(const std::optional<double>& v) {
  if (!v) return "-";
  if (std::isinf(*v)) return "inf/NaN";
  return QString::number(*v, 'g', 3);
}
QTableWidgetItem* cell(const QString& text, const QColor& color = {}) {
  auto* i = new QTableWidgetItem(text);
  i->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  if (color.isValid()) i->setForeground(color);
  return i;
}
}  // namespace

CorrectnessTable::CorrectnessTable(QWidget* parent) : QTableWidget(parent) {
  setColumnCount(7);
  setHorizontalHeaderLabels({tr("Trial / check"), tr("Result"), tr("Max abs vs eager"),
                             tr("Max rel vs eager"), tr("Max abs vs fp64"), tr("Eager vs fp64"),
                             tr("Runs agree / detail")});
  verticalHeader()->hide();
  horizontalHeader()->setStretchLastSection(true);
  setWordWrap(false);
}

void CorrectnessTable::setResult(const ValidationResult& r) {
  setRowCount(0);
  const QColor ok(30, 130, 60), bad(190, 30, 30);
  for (const auto& t : r.trials) {
    int row = rowCount();
    insertRow(row);
    setItem(row, 0, cell(tr("trial, seed %1").arg(t.seed)));
    setItem(row, 1, cell(t.ok ? tr("passed") : tr("FAILED"), t.ok ? ok : bad));
    setItem(row, 2, cell(err(t.max_abs_vs_eager)));
    setItem(row, 3, cell(err(t.max_rel_vs_eager)));
    setItem(row, 4, cell(err(t.max_abs_vs_fp64)));
    setItem(row, 5, cell(err(t.eager_max_abs_vs_fp64)));
    QString detail = t.runs_agree ? tr("yes") : tr("NO");
    if (!t.problems.empty()) detail += "  " + QString::fromStdString(t.problems.front());
    setItem(row, 6, cell(detail, t.runs_agree ? QColor() : bad));
  }
  for (const auto& c : r.checks) {
    int row = rowCount();
    insertRow(row);
    setItem(row, 0, cell(QString::fromStdString(c.name)));
    setItem(row, 1, cell(c.passed ? tr("passed") : tr("FAILED"), c.passed ? ok : bad));
    for (int col = 2; col < 6; ++col) setItem(row, col, cell(""));
    setItem(row, 6, cell(QString::fromStdString(c.detail)));
  }
  resizeColumnsToContents();
}

}  // namespace nova::ui
