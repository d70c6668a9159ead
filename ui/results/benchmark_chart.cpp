#include "ui/results/benchmark_chart.h"

#include <algorithm>

#include <QBarCategoryAxis>
#include <QBoxPlotSeries>
#include <QBoxSet>
#include <QChart>
#include <QPen>
#include <QValueAxis>

#include "ui/results/chart_install.h"
namespace nova::ui {
QString BenchmarkChart::modeLabel(const std::string& mode) {
  if (mode == "cold") return tr("GPU time, L2 flushed");
  if (mode == "warm") return tr("GPU time, warm L2");
  if (mode == "graph") return tr("CUDA-graph replay");
  if (mode == "wall") return tr("wall time per call");
  return QString::fromStdString(mode);
}

QString BenchmarkChart::shortModeLabel(const std::string& mode) {
  if (mode == "graph") return tr("CUDA graph");
  return QString::fromStdString(mode);  // cold, warm, wall: the chart's tooltip says what each is
}

QString BenchmarkChart::shortVariantLabel(const std::string& variant) {
  if (variant == "eager") return tr("eager");
  if (variant == BenchmarkResult::kCopyReference) return tr("copy (floor)");
  return variantLabel(variant);
}

QString BenchmarkChart::variantLabel(const std::string& variant) {
  if (variant == "compile") return "torch.compile";
  if (variant == "eager") return "PyTorch eager";
  if (variant == BenchmarkResult::kCopyReference) return tr("copy of the same bytes (memory floor)");
  return QString::fromStdString(variant);
}

BenchmarkChart::BenchmarkChart(QWidget* parent) : QChartView(parent) {
  setRenderHint(QPainter::Antialiasing);
  chart()->setTitle(tr("No benchmark yet"));
  setMinimumSize(480, 300);
  setToolTip(tr("cold: GPU time with the L2 flushed before each call\nwarm: GPU time, warm L2\n"
                "CUDA graph: GPU time of a CUDA-graph replay\nwall: host time per call, back to back\n"
                "copy (floor): a copy of the same bytes, the memory-bound floor"));
}

void BenchmarkChart::clear() {
  auto* chart = new QChart;
  chart->setTitle(tr("No benchmark yet"));
  QChart* old = this->chart();
  setChart(chart);
  delete old;
  boxes_ = 0;
}

void BenchmarkChart::setResult(const BenchmarkResult& r) {
  auto* chart = new QChart;
  chart->setTitle(tr("Time per call (us): median, IQR box, 1.5 IQR whiskers"));
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->legend()->setShowToolTips(true);
  auto modes = r.modes();
  QStringList categories;
  for (const auto& m : modes) categories << shortModeLabel(m);  // the long forms cut short in the panel
  double top = 0;
  boxes_ = 0;
  const QColor colors[] = {QColor(120, 120, 120), QColor(70, 120, 200), QColor(230, 120, 30),
                           QColor(150, 200, 150)};
  int ci = 0;
  for (const char* variant : {"eager", "compile", "candidate", BenchmarkResult::kCopyReference}) {
    auto* series = new QBoxPlotSeries;
    series->setName(shortVariantLabel(variant));
    const QColor color = colors[ci++ % 4];
    bool any = false;
    for (const auto& mode : modes) {
      const Measurement* m = r.find(variant, mode);
      auto* set = new QBoxSet(shortModeLabel(mode));
      if (m && m->summary.n > 0) {
        const auto& s = m->summary;
        double lo = s.q1 - 1.5 * s.iqr, hi = s.q3 + 1.5 * s.iqr;
        double wlo = s.max, whi = s.min;
        for (double x : m->samples) {
          if (x >= lo) wlo = std::min(wlo, x);
          if (x <= hi) whi = std::max(whi, x);
        }
        set->setValue(QBoxSet::LowerExtreme, wlo);
        set->setValue(QBoxSet::LowerQuartile, s.q1);
        set->setValue(QBoxSet::Median, s.median);
        set->setValue(QBoxSet::UpperQuartile, s.q3);
        set->setValue(QBoxSet::UpperExtreme, whi);
        top = std::max(top, whi);
        any = true;
        ++boxes_;
      }
      series->append(set);
    }
    if (!any) {
      delete series;
      continue;
    }
    chart->addSeries(series);  // applies the theme: colours are set after it
    series->setBrush(color);
    series->setPen(QPen(color.darker(160), 1.5));
    for (auto* set : series->boxSets()) {
      set->setBrush(color);
      set->setPen(QPen(color.darker(160), 1.5));
    }
  }
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  auto* y = new QValueAxis;
  y->setRange(0, top * 1.1 + 1e-9);
  y->setTitleText("us");
  y->setLabelFormat("%.0f");
  y->applyNiceNumbers();
  install_chart(*this, chart, x, y);
}

}  // namespace nova::ui
