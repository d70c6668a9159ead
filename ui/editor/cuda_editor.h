#pragma once
// The CUDA source editor of the kernel workspace: QScintilla with CUDA highlighting, line numbers,
// folding, and build diagnostics shown as margin markers plus boxed annotations under their lines.
#include <Qsci/qsciscintilla.h>

#include <vector>

#include "core/build/diagnostics.h"

namespace nova::ui {

class CudaEditor : public QsciScintilla {
  Q_OBJECT
 public:
  // Marker numbers, one per severity; markersAtLine() returns 1 << marker.
  enum Marker { ErrorMarker = 0, WarningMarker = 1, NoteMarker = 2 };

  explicit CudaEditor(QWidget* parent = nullptr);

  // Replaces all markers and annotations. Lines outside the text are ignored.
  void setDiagnostics(const std::vector<Diagnostic>& diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

  // 1-based line (and column, 0 for the line start): moves the cursor there and shows it.
  void goToLine(int line, int column = 0);

 private:
  std::vector<Diagnostic> diagnostics_;
  int annotation_style_base_ = 0;
};

}  // namespace nova::ui
