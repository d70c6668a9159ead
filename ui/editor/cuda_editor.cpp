#include "ui/editor/cuda_editor.h"

#include <QFontDatabase>

#include <map>

#include "ui/editor/cuda_lexer.h"

namespace nova::ui {

namespace {
constexpr int kLineMargin = 0, kMarkerMargin = 1, kFoldMargin = 2;
}

CudaEditor::CudaEditor(QWidget* parent) : QsciScintilla(parent) {
  setUtf8(true);
  setLexer(new CudaLexer(this));
  setIndentationsUseTabs(false);
  setIndentationWidth(4);
  setAutoIndent(true);
  setBraceMatching(SloppyBraceMatch);
  setCaretLineVisible(true);
  setCaretLineBackgroundColor(QColor("#f3f6fb"));

  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  setMarginsFont(mono);
  setMarginType(kLineMargin, NumberMargin);
  setMarginLineNumbers(kLineMargin, true);
  setMarginWidth(kLineMargin, "00000");
  setMarginType(kMarkerMargin, SymbolMargin);
  setMarginWidth(kMarkerMargin, 16);
  setMarginSensitivity(kMarkerMargin, true);
  setMarginMarkerMask(kMarkerMargin, (1 << ErrorMarker) | (1 << WarningMarker) | (1 << NoteMarker));
  setFolding(BoxedTreeFoldStyle, kFoldMargin);

  markerDefine(Circle, ErrorMarker);
  setMarkerBackgroundColor(QColor("#d32f2f"), ErrorMarker);
  setMarkerForegroundColor(QColor("#8e0000"), ErrorMarker);
  markerDefine(Circle, WarningMarker);
  setMarkerBackgroundColor(QColor("#f9a825"), WarningMarker);
  setMarkerForegroundColor(QColor("#8d6e00"), WarningMarker);
  markerDefine(Circle, NoteMarker);
  setMarkerBackgroundColor(QColor("#1976d2"), NoteMarker);
  setMarkerForegroundColor(QColor("#004ba0"), NoteMarker);

  // Annotation styles live past the lexer's styles (0..127 for the C++ lexer).
  annotation_style_base_ = 200;
  setAnnotationDisplay(AnnotationBoxed);
  struct Look {
    const char* fg;
    const char* bg;
  };
  const Look looks[] = {{"#8e0000", "#fdecea"}, {"#6d4c00", "#fff8e1"}, {"#0d47a1", "#e3f2fd"}};
  for (int i = 0; i < 3; ++i) {
    int style = annotation_style_base_ + i;
    SendScintilla(SCI_STYLESETFORE, style, QColor(looks[i].fg));
    SendScintilla(SCI_STYLESETBACK, style, QColor(looks[i].bg));
    SendScintilla(SCI_STYLESETFONT, style, mono.family().toUtf8().constData());
    SendScintilla(SCI_STYLESETSIZE, style, mono.pointSize() > 0 ? mono.pointSize() : 10);
  }
}

void CudaEditor::setDiagnostics(const std::vector<Diagnostic>& diagnostics) {
  diagnostics_ = diagnostics;
  markerDeleteAll();
  clearAnnotations();
  // Several diagnostics on one line share one annotation, worst severity first for its colour.
  std::map<int, std::pair<int, QStringList>> by_line;
  for (const auto& d : diagnostics) {
    int line = d.line - 1;
    if (line < 0 || line >= lines()) continue;
    int severity = static_cast<int>(d.severity);
    markerAdd(line, severity);  // Marker numbers follow DiagnosticSeverity
    auto& [worst, texts] = by_line.try_emplace(line, severity, QStringList{}).first->second;
    worst = std::min(worst, severity);
    texts << QString::fromStdString(to_string(d.severity) + ": " + d.message);
  }
  for (const auto& [line, entry] : by_line)
    annotate(line, entry.second.join('\n'), annotation_style_base_ + entry.first);
}

void CudaEditor::goToLine(int line, int column) {
  int l = std::clamp(line - 1, 0, std::max(0, lines() - 1));
  setCursorPosition(l, std::max(0, column - 1));
  ensureLineVisible(l);
  setFocus();
}

}  // namespace nova::ui
