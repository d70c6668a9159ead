#pragma once
// The list of build diagnostics under the kernel editor: severity, line and message per entry;
// activating one (double-click or Enter) emits lineActivated so the editor jumps there.
#include <QTreeWidget>

#include <vector>

#include "core/build/diagnostics.h"

namespace nova::ui {

class DiagnosticsList : public QTreeWidget {
  Q_OBJECT
 public:
  explicit DiagnosticsList(QWidget* parent = nullptr);
  void setDiagnostics(const std::vector<Diagnostic>& diagnostics);

 signals:
  void lineActivated(int line, int column);
};

}  // namespace nova::ui
