#include "ui/editor/diagnostics_list.h"

#include <QHeaderView>

namespace nova::ui {

DiagnosticsList::DiagnosticsList(QWidget* parent) : QTreeWidget(parent) {
  setColumnCount(3);
  setHeaderLabels({"Severity", "Line", "Message"});
  setRootIsDecorated(false);
  setUniformRowHeights(true);
  header()->setSectionResizeMode(2, QHeaderView::Stretch);
  connect(this, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
    emit lineActivated(item->data(1, Qt::UserRole).toInt(), item->data(1, Qt::UserRole + 1).toInt());
  });
}

void DiagnosticsList::setDiagnostics(const std::vector<Diagnostic>& diagnostics) {
  clear();
  for (const auto& d : diagnostics) {
    auto* item = new QTreeWidgetItem(this);
    item->setText(0, QString::fromStdString(to_string(d.severity)));
    item->setText(1, d.column ? QString("%1:%2").arg(d.line).arg(d.column) : QString::number(d.line));
    item->setText(2, QString::fromStdString(d.message).replace('\n', "  "));
    item->setToolTip(2, QString::fromStdString(d.file + "\n" + d.message));
    item->setData(1, Qt::UserRole, d.line);
    item->setData(1, Qt::UserRole + 1, d.column);
    const char* color = d.severity == DiagnosticSeverity::error     ? "#c62828"
                        : d.severity == DiagnosticSeverity::warning ? "#a66900"
                                                                    : "#1565c0";
    item->setForeground(0, QColor(color));
  }
  resizeColumnToContents(0);
  resizeColumnToContents(1);
}

}  // namespace nova::ui
