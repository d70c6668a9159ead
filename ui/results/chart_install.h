#pragma once
// Puts a freshly built chart into a chart view: adds the two axes, attaches every series to them,
// and replaces (and deletes) the chart the view showed before. Shared by the studio's charts.
#include <QAbstractAxis>
#include <QChart>
#include <QChartView>

namespace nova::ui {

inline void install_chart(QChartView& view, QChart* chart, QAbstractAxis* x, QAbstractAxis* y) {
  if (x) chart->addAxis(x, Qt::AlignBottom);
  if (y) chart->addAxis(y, Qt::AlignLeft);
  for (auto* s : chart->series()) {
    if (x) s->attachAxis(x);
    if (y) s->attachAxis(y);
  }
  QChart* old = view.chart();
  view.setChart(chart);
  delete old;
}

}  // namespace nova::ui
