#pragma once
// C++ highlighting plus CUDA: qualifiers and launch attributes as keywords (set 1), built-in
// variables, intrinsics and vector types as a second keyword set (set 2). Used by the kernel editor
// and both diff panes.
#include <Qsci/qscilexercpp.h>

namespace nova::ui {

class CudaLexer : public QsciLexerCPP {
  Q_OBJECT
 public:
  explicit CudaLexer(QObject* parent = nullptr);
  const char* language() const override { return "CUDA"; }
  const char* keywords(int set) const override;
};

}  // namespace nova::ui
