#pragma once
// The benchmark chart of the results panel: per mode (cold L2, warm, CUDA graph, wall), one box
// per variant (eager, torch.compile, candidate): the box spans the interquartile range with the
// median line, whiskers reach the furthest samples within 1.5 IQR. Qt Charts.
#include <QChartView>

#include "core/verify/benchmark_result.h"

namespace nova::ui {

class BenchmarkChart : public QChartView {
  Q_OBJECT
 public:
  explicit BenchmarkChart(QWidget* parent = nullptr);
  void setResult(const BenchmarkResult& result);
  void clear();  // no benchmark shown
  int boxCount() const { return boxes_; }
  // Words for a mode ("GPU time, L2 flushed") and a variant ("PyTorch eager"), shared with the panel.
  static QString modeLabel(const std::string& mode);
  static QString variantLabel(const std::string& variant);
  // The chart's own labels, short enough for the results panel ("cold", "CUDA graph"; "eager",
  // "copy (floor)"); the view's tooltip gives the long forms.
  static QString shortModeLabel(const std::string& mode);
  static QString shortVariantLabel(const std::string& variant);

 private:
  int boxes_ = 0;
};

}  // namespace nova::ui
