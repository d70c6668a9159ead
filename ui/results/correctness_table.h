#pragma once
// The correctness table of the results panel: one row per trial (seed, verdict, max abs and rel
// error against eager, max abs error against float64 next to eager's own, run agreement), then
// one row per check (static checks, build, second shape) with its detail.
#include <QTableWidget>

#include "core/verify/validation_result.h"

namespace nova::ui {

class CorrectnessTable : public QTableWidget {
  Q_OBJECT
 public:
  explicit CorrectnessTable(QWidget* parent = nullptr);
  void setResult(const ValidationResult& result);
};

}  // namespace nova::ui
