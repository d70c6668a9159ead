#include "ui/results/roofline_chart.h"

#include <algorithm>
#include <cmath>

#include <QChart>
#include <QLineSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QLogValueAxis>
#include <QPen>
#include <QScatterSeries>

#include "core/project/project_store.h"
#include "core/session/project_evidence.h"
#include "core/session/stored_generation.h"
#include "ui/results/chart_install.h"

namespace nova::ui {
namespace {

double coldMedian(const BenchmarkResult& r, const std::string& variant) {
  const Measurement* m = r.find(variant, "cold");
  return m && m->summary.n > 0 ? m->summary.median : 0;
}

const CopyShare* coldCopy(const BenchmarkResult& r) {
  for (const auto& c : r.copy_shares)
    if (c.mode == "cold" && c.bytes > 0 && c.copy_us > 0) return &c;
  return nullptr;
}

}  // namespace

RooflineChart::RooflineChart(QWidget* parent) : QChartView(parent) {
  setRenderHint(QPainter::Antialiasing);
  setMinimumSize(360, 300);
  clear(tr("Roofline: not measured (no benchmark yet)"));
}

std::optional<double> RooflineChart::bandwidthOf(const BenchmarkResult& result) {
  if (const CopyShare* copy = coldCopy(result)) return copy->bytes / (copy->copy_us * 1e-6);
  return std::nullopt;
}

std::vector<RooflineChart::Dot> RooflineChart::dotsOf(const BenchmarkResult& result, double flops,
                                                      double group_bytes, const QString& label, bool shown,
                                                      bool baselines) {
  std::vector<Dot> dots;
  const CopyShare* copy = coldCopy(result);
  const double bytes = copy ? copy->bytes : group_bytes;
  if (bytes <= 0 || flops <= 0) return dots;
  auto add = [&](const QString& name, const std::string& variant, bool baseline) {
    const double us = coldMedian(result, variant);
    if (us > 0) dots.push_back({name, baseline, shown && !baseline, flops / bytes, flops / (us * 1e-6)});
  };
  add(label, "candidate", false);
  if (baselines) {
    add(tr("PyTorch eager"), "eager", true);
    add("torch.compile", "compile", true);
  }
  return dots;
}

QString RooflineChart::title() const { return chart()->title(); }

void RooflineChart::clear(const QString& why) { setDots({}, std::nullopt, why); }

std::vector<RooflineChart::Dot> RooflineChart::showStored(const ProjectStore& store, qint64 version) {
  std::vector<Dot> dots;
  std::optional<double> bandwidth;
  const CandidateVersion shown = store.version(version);
  double flops = 0, group_bytes = 0;
  for (const auto& g : stored_groups(store))
    if (g.record_id == shown.group_id) flops = g.group.flops, group_bytes = g.group.bytes;
  if (flops <= 0) {
    clear(tr("Roofline: the group's FLOPs are not known"));
    return dots;
  }
  for (const auto& v : store.versions(shown.group_id)) {
    const auto bench = ProjectEvidence::latest_benchmark(store, v.id);
    if (!bench) continue;
    if (auto b = bandwidthOf(*bench); b && (!bandwidth || v.id == version)) bandwidth = b;
    const bool isShown = v.id == version;  // the baselines as measured beside the version shown
    for (auto& d : dotsOf(*bench, flops, group_bytes, QString("v%1").arg(v.id), isShown, isShown)) dots.push_back(d);
  }
  setDots(dots, bandwidth, tr("Roofline: not measured (no version of this group has a cold-mode benchmark)"));
  return dots;
}

void RooflineChart::setDots(const std::vector<Dot>& dots, std::optional<double> bandwidth, const QString& why_empty) {
  dots_ = static_cast<int>(dots.size());
  auto* chart = new QChart;
  chart->legend()->setAlignment(Qt::AlignBottom);
  if (dots.empty()) {
    chart->setTitle(why_empty);
    install_chart(*this, chart, nullptr, nullptr);
    return;
  }
  // The roof's figure is in the title, not the legend: the panel is narrow, and a legend entry per
  // series was cut short ("memo…", "PyTorc…") there.
  chart->setTitle(bandwidth ? tr("Roofline (cold) · dashed roof %1 TB/s (copy)").arg(*bandwidth / 1e12, 0, 'f', 2)
                            : tr("Roofline (cold) · memory roof not measured"));
  chart->legend()->setShowToolTips(true);
  double xmin = 1e30, xmax = 0, ymin = 1e30, ymax = 0;
  auto* versions = new QScatterSeries;
  versions->setName(tr("others"));
  versions->setMarkerSize(9);
  auto* shown = new QScatterSeries;
  shown->setName(tr("this version"));
  shown->setMarkerSize(13);
  auto* eager = new QScatterSeries;
  eager->setName(tr("eager"));
  eager->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  eager->setMarkerSize(9);
  auto* compiled = new QScatterSeries;
  compiled->setName("torch.compile");
  compiled->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
  compiled->setMarkerSize(11);
  for (const auto& d : dots) {
    const double y = d.flops_per_s / 1e9;
    QScatterSeries* into = !d.baseline ? (d.shown ? shown : versions) : d.label == "torch.compile" ? compiled : eager;
    into->append(d.intensity, y);
    xmin = std::min(xmin, d.intensity), xmax = std::max(xmax, d.intensity);
    ymin = std::min(ymin, y), ymax = std::max(ymax, y);
  }
  // A decade either side of the dots, and the roof across it.
  xmin = std::pow(10, std::floor(std::log10(xmin)) - 1);
  xmax = std::pow(10, std::ceil(std::log10(xmax)) + 1);
  QLineSeries* roof = nullptr;
  if (bandwidth) {
    roof = new QLineSeries;
    roof->setName(tr("memory roof %1 TB/s (copy)").arg(*bandwidth / 1e12, 0, 'f', 2));
    roof->append(xmin, *bandwidth * xmin / 1e9);
    roof->append(xmax, *bandwidth * xmax / 1e9);
    double intensity = 0;
    for (const auto& d : dots) intensity = std::max(intensity, d.intensity);
    ymax = std::max(ymax, *bandwidth * intensity / 1e9);  // the roof above the dots stays in view
  }
  ymin = std::pow(10, std::floor(std::log10(ymin)) - 1);
  ymax = std::pow(10, std::ceil(std::log10(ymax)) + 1);
  for (auto* s : {versions, shown, eager, compiled}) {
    if (s->count() == 0) {
      delete s;
      continue;
    }
    chart->addSeries(s);
  }
  if (roof) {
    chart->addSeries(roof);
    roof->setPen(QPen(QColor("#757575"), 2, Qt::DashLine));
    for (auto* marker : chart->legend()->markers(roof)) marker->setVisible(false);
  }
  auto* x = new QLogValueAxis;
  x->setBase(10);
  x->setRange(xmin, xmax);
  x->setLabelFormat("%g");
  x->setTitleText(tr("FLOP/byte"));  // arithmetic intensity; longer was cut short in the panel
  auto* y = new QLogValueAxis;
  y->setBase(10);
  y->setRange(ymin, ymax);
  y->setLabelFormat("%g");
  y->setTitleText(tr("GFLOP/s"));
  install_chart(*this, chart, x, y);
}

}  // namespace nova::ui
