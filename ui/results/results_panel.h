#pragma once
// The studio's results panel for one candidate version: the verdict and flags, the correctness table
// and the benchmark chart, the benchmark's verdict against eager (ships or declined, with its
// sentence), a roofline of the group's versions and baselines beside the chart (RooflineChart), the
// speedups written out in words and the environment and method the numbers were
// measured with. It shows what the project holds: showStored() reads the version's latest results
// back (ProjectEvidence), as the session's jobs stored them.
#include <QWidget>

#include <optional>

#include "core/verify/benchmark_result.h"
#include "core/verify/validation_result.h"

class QLabel;

namespace nova {
class ProjectStore;
}

namespace nova::ui {

class BenchmarkChart;
class CorrectnessTable;
class RooflineChart;

class ResultsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ResultsPanel(QWidget* parent = nullptr);
  // The version's latest stored validation and benchmark (or that it has none yet).
  void showStored(const ProjectStore& store, qint64 version);
  std::optional<qint64> shownVersion() const { return version_; }
  void clear(const QString& message);
  void setValidation(const ValidationResult& result);
  void setBenchmark(const BenchmarkResult& result);

  QString verdictText() const;
  QString speedupText() const;
  QString benchmarkVerdictText() const;
  QString methodText() const;  // where, how many calls, how the cold mode flushed the L2
  CorrectnessTable* table() const { return table_; }
  BenchmarkChart* chart() const { return chart_; }
  RooflineChart* roofline() const { return roofline_; }
  // "3.21x faster than PyTorch eager (GPU, L2 flushed)": one sentence per baseline and mode.
  static QString describeSpeedups(const BenchmarkResult& result);

 private:
  QLabel* verdict_;
  QLabel* flags_;
  QLabel* benchmarkVerdict_;
  QLabel* speedups_;
  QLabel* environment_;
  CorrectnessTable* table_;
  BenchmarkChart* chart_;
  RooflineChart* roofline_;
  std::optional<qint64> version_;
};

}  // namespace nova::ui
