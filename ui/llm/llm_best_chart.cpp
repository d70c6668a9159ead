#include "ui/llm/llm_best_chart.h"

#include <algorithm>

#include <QChart>
#include <QLineSeries>
#include <QPen>
#include <QScatterSeries>
#include <QLogValueAxis>
#include <QValueAxis>

#include "ui/results/chart_install.h"
namespace nova::ui {

LlmBestChart::LlmBestChart(QWidget* parent) : QChartView(parent) {
  setRenderHint(QPainter::Antialiasing);
  setMinimumSize(320, 150);  // low enough that the LLM dock never crowds the timeline it shares
  setPoints({}, std::nullopt, 0, 1, tr("No LLM search yet"));
}

std::vector<std::optional<double>> LlmBestChart::bestSoFar(const std::vector<Point>& measured, int rounds) {
  std::vector<std::optional<double>> best(std::max(0, rounds));
  for (int r = 1; r <= rounds; ++r) {
    std::optional<double> b = r > 1 ? best[r - 2] : std::nullopt;
    for (const auto& p : measured)
      if (p.round == r && (!b || p.us < *b)) b = p.us;
    best[r - 1] = b;
  }
  return best;
}

void LlmBestChart::setPoints(const std::vector<Point>& measured, std::optional<double> bar_us, int reached,
                             int rounds, const QString& why_empty) {
  rounds = std::max({rounds, reached, 1});
  measured_ = static_cast<int>(measured.size());
  auto* chart = new QChart;
  // The dock is low: no legend (the title says what the marks are), thin margins, three y ticks.
  chart->legend()->hide();
  chart->setMargins(QMargins(2, 2, 2, 2));
  QFont title = chart->titleFont();
  title.setPointSizeF(title.pointSizeF() * 0.9);
  chart->setTitleFont(title);
  double top = bar_us.value_or(0), low = bar_us.value_or(0);
  auto* points = new QScatterSeries;
  points->setName(tr("candidate"));
  points->setMarkerSize(8);
  for (const auto& p : measured) {
    points->append(p.round, p.us);
    top = std::max(top, p.us);
    if (p.us > 0) low = low > 0 ? std::min(low, p.us) : p.us;
  }
  auto* best = new QLineSeries;
  best->setName(tr("best so far"));
  const auto steps = bestSoFar(measured, reached);
  for (int r = 1; r <= reached; ++r)
    if (steps[r - 1]) {
      if (!best->points().isEmpty()) best->append(r, best->points().back().y());  // a step, not a slope
      best->append(r, *steps[r - 1]);
    }
  chart->addSeries(points);
  chart->addSeries(best);
  best->setPen(QPen(QColor("#2e7d32"), 2));
  if (bar_us) {
    auto* bar = new QLineSeries;
    bar->setName(tr("builtin (the bar)"));
    bar->append(0, *bar_us);
    bar->append(rounds + 1, *bar_us);
    chart->addSeries(bar);
    bar->setPen(QPen(QColor("#757575"), 1.5, Qt::DashLine));
  }
  auto* x = new QValueAxis;
  x->setRange(0, rounds + 1);
  if (rounds <= 12)
    x->setTickCount(rounds + 2);  // a tick on every round
  else
    x->applyNiceNumbers();
  x->setLabelFormat("%.0f");
  // Times a decade or more apart (a slow candidate at 279 µs beside a bar of 12 µs) go on a log axis: on a
  // linear one the best and the bar, the comparison that matters, merge into one line at the bottom.
  QAbstractAxis* y = nullptr;
  log_scale_ = low > 0 && top / low >= 10;
  if (log_scale_) {
    auto* log_axis = new QLogValueAxis;
    log_axis->setBase(10);
    log_axis->setRange(low * 0.8, top * 1.25);  // not whole decades: the dock is low, every pixel counts
    log_axis->setLabelFormat("%.3g");
    log_axis->setMinorTickCount(8);
    y = log_axis;
  } else {
    auto* linear = new QValueAxis;
    linear->setRange(0, top > 0 ? top * 1.15 : 1);
    linear->setTickCount(3);
    linear->setLabelFormat("%.3g");
    y = linear;
  }
  chart->setTitle(measured.empty() ? why_empty
                                   : tr("Cold µs by round%1: dots candidates, green best so far, dashed builtin")
                                         .arg(log_scale_ ? tr(" (log scale)") : QString()));
  install_chart(*this, chart, x, y);
}

}  // namespace nova::ui
