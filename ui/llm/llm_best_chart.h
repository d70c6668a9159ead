#pragma once
// The LLM panel's chart: each measured candidate's cold time against its round, the best so far as a
// step line, and the builtin candidate (the bar) as a dashed line; on a log axis when the times span a
// decade or more. Says "not measured" in its title
// while no candidate has a time (no GPU here, or nothing evaluated yet).
#include <QChartView>

#include <optional>
#include <vector>

namespace nova::ui {

class LlmBestChart : public QChartView {
  Q_OBJECT
 public:
  struct Point {
    int round = 0;
    double us = 0;  // cold median, µs
  };
  explicit LlmBestChart(QWidget* parent = nullptr);
  // `reached`: the last round the search asked for (the best-so-far line ends there); `rounds`: the
  // rounds it may run (the x axis' end). `why_empty`: the title while nothing is measured.
  void setPoints(const std::vector<Point>& measured, std::optional<double> bar_us, int reached, int rounds,
                 const QString& why_empty);
  int measuredCount() const { return measured_; }
  // Whether the time axis is logarithmic (the times shown span a decade or more).
  bool logScale() const { return log_scale_; }
  // The best time at or before each round 1..rounds (unset: nothing measured by then).
  static std::vector<std::optional<double>> bestSoFar(const std::vector<Point>& measured, int rounds);

 private:
  int measured_ = 0;
  bool log_scale_ = false;
};

}  // namespace nova::ui
