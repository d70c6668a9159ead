// The CUDA editor on the offscreen platform: CUDA highlighting, diagnostics from a real NVRTC log as
// markers and annotations, the diagnostics list jumping to its line, and find and replace.
#include "ui/editor/cuda_editor.h"

#include <QTest>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "support/test_paths.h"
#include "ui/editor/cuda_lexer.h"
#include "ui/editor/diagnostics_list.h"
#include "ui/editor/find_replace_bar.h"
#include "ui/screenshot.h"

namespace nova::ui {
namespace {

QString fixture_text(const std::string& name) {
  std::ifstream in(test::fixtures_dir() / name);
  std::stringstream ss;
  ss << in.rdbuf();
  return QString::fromStdString(ss.str());
}

int style_at(CudaEditor& editor, int line, const QString& word) {
  editor.SendScintilla(QsciScintillaBase::SCI_COLOURISE, 0, -1);
  int index = editor.text(line).indexOf(word);
  EXPECT_GE(index, 0) << word.toStdString();
  long pos = editor.positionFromLineIndex(line, index);
  return static_cast<int>(editor.SendScintilla(QsciScintillaBase::SCI_GETSTYLEAT, pos));
}

TEST(CudaEditor, HighlightsCudaKeywordsAndBuiltins) {
  CudaEditor editor;
  editor.setText(
      "__global__ void k(const float* __restrict__ x, float4* y) {\n"
      "  __shared__ float tile[32];\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  __syncthreads();\n"
      "  float v = __shfl_down_sync(0xffffffff, x[i], 1);\n"
      "  int plain = 0;\n"
      "}\n");
  EXPECT_EQ(style_at(editor, 0, "__global__"), QsciLexerCPP::Keyword);
  EXPECT_EQ(style_at(editor, 0, "__restrict__"), QsciLexerCPP::Keyword);
  EXPECT_EQ(style_at(editor, 1, "__shared__"), QsciLexerCPP::Keyword);
  EXPECT_EQ(style_at(editor, 0, "float4"), QsciLexerCPP::KeywordSet2);
  EXPECT_EQ(style_at(editor, 2, "threadIdx"), QsciLexerCPP::KeywordSet2);
  EXPECT_EQ(style_at(editor, 2, "blockDim"), QsciLexerCPP::KeywordSet2);
  EXPECT_EQ(style_at(editor, 3, "__syncthreads"), QsciLexerCPP::KeywordSet2);
  EXPECT_EQ(style_at(editor, 4, "__shfl_down_sync"), QsciLexerCPP::KeywordSet2);
  EXPECT_EQ(style_at(editor, 5, "plain"), QsciLexerCPP::Identifier);
}

TEST(CudaEditor, PlacesNvrtcDiagnosticsAtTheirLinesAndTheListJumpsThere) {
  CudaEditor editor;
  editor.resize(900, 600);
  editor.setText(fixture_text("diagnostics/broken_kernel.cu"));
  auto diagnostics = parse_diagnostics(fixture_text("diagnostics/nvrtc_broken_kernel.log").toStdString());
  ASSERT_EQ(diagnostics.size(), 3u);
  editor.setDiagnostics(diagnostics);
  // broken_kernel.cu: line 9 uses `channel`, line 11 assigns float* to float4*, line 6 is unused.
  EXPECT_EQ(editor.markersAtLine(8), 1u << CudaEditor::ErrorMarker);
  EXPECT_EQ(editor.markersAtLine(10), 1u << CudaEditor::ErrorMarker);
  EXPECT_EQ(editor.markersAtLine(5), 1u << CudaEditor::WarningMarker);
  EXPECT_EQ(editor.markersAtLine(7), 0u);
  EXPECT_TRUE(editor.text(8).contains("channel"));
  EXPECT_EQ(editor.annotation(8), "error: identifier \"channel\" is undefined");
  EXPECT_TRUE(editor.annotation(5).startsWith("warning: variable \"unused_lane\""));
  EXPECT_TRUE(editor.annotation(7).isEmpty());

  DiagnosticsList list;
  list.setDiagnostics(diagnostics);
  ASSERT_EQ(list.topLevelItemCount(), 3);
  QObject::connect(&list, &DiagnosticsList::lineActivated, &editor, &CudaEditor::goToLine);
  emit list.itemActivated(list.topLevelItem(1), 0);
  int line = -1, index = -1;
  editor.getCursorPosition(&line, &index);
  EXPECT_EQ(line, 10);

  editor.setDiagnostics({});
  EXPECT_EQ(editor.markersAtLine(8), 0u);
  EXPECT_TRUE(editor.annotation(8).isEmpty());
}

TEST(CudaEditor, FindAndReplace) {
  CudaEditor editor;
  editor.setText("float a = x;\nfloat b = x + x;\nint c = 1;\n");
  FindReplaceBar bar(&editor);
  bar.setFindText("float");
  bar.setCaseSensitive(true);
  ASSERT_TRUE(bar.findNext());
  EXPECT_EQ(editor.selectedText(), "float");
  int line = -1, index = -1;
  editor.getCursorPosition(&line, &index);
  EXPECT_EQ(line, 0);
  ASSERT_TRUE(bar.findNext());
  editor.getCursorPosition(&line, &index);
  EXPECT_EQ(line, 1);
  bar.setFindText("x");
  bar.setReplaceText("xx");  // contains the pattern: must not loop or replace twice
  EXPECT_EQ(bar.replaceAll(), 3);
  EXPECT_EQ(editor.text(), "float a = xx;\nfloat b = xx + xx;\nint c = 1;\n");
  EXPECT_EQ(bar.status(), "3 replaced");
  editor.undo();  // one undo step
  EXPECT_EQ(editor.text(), "float a = x;\nfloat b = x + x;\nint c = 1;\n");
  bar.setFindText("double");
  EXPECT_FALSE(bar.findNext());
  EXPECT_EQ(bar.status(), "No match");
}

TEST(CudaEditor, ScreenshotOfTheSeedKernelWithDiagnostics) {
  CudaEditor editor;
  editor.resize(1000, 700);
  editor.setText(fixture_text("diagnostics/broken_kernel.cu") + "\n" +
                 fixture_text("reference_kernels/conv2d_min_add_multiply.seed.cu"));
  editor.setDiagnostics(parse_diagnostics(fixture_text("diagnostics/nvrtc_broken_kernel.log").toStdString()));
  editor.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&editor));
  EXPECT_TRUE(test::save_screenshot(editor, "cuda_editor"));
}

}  // namespace
}  // namespace nova::ui
