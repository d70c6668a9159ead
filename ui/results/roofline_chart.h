#pragma once
// The results panel's roofline (Nsight Compute style, log-log): for the shown version's fusion group,
// one dot per benchmarked version and one for each baseline (PyTorch eager, torch.compile) at the
// group's arithmetic intensity (its FLOPs over the compulsory bytes the copy reference moved), at the
// FLOP/s each reached in the cold mode; the memory roof is the copy reference's measured bandwidth.
// No compute roof is drawn: no peak is measured. "Not measured" where no benchmark exists.
#include <QChartView>

#include <optional>
#include <vector>

#include "core/verify/benchmark_result.h"

namespace nova {
class ProjectStore;
}

namespace nova::ui {

class RooflineChart : public QChartView {
  Q_OBJECT
 public:
  struct Dot {
    QString label;  // "v12", "PyTorch eager", "torch.compile"
    bool baseline = false;
    bool shown = false;  // the version the panel shows
    double intensity = 0;        // FLOP per byte
    double flops_per_s = 0;
  };
  explicit RooflineChart(QWidget* parent = nullptr);
  // Reads the group of `version` back: every version of it with a stored benchmark. Returns the dots.
  std::vector<Dot> showStored(const ProjectStore& store, qint64 version);
  void clear(const QString& why);
  // `bandwidth`: bytes per second of the copy reference (the memory roof); unset: not measured.
  void setDots(const std::vector<Dot>& dots, std::optional<double> bandwidth, const QString& why_empty);
  QString title() const;
  int dotCount() const { return dots_; }
  // One benchmark's dots: the candidate as `label` and, with `baselines`, eager and torch.compile, at
  // `flops` over the bytes the copy reference moved (else `group_bytes`); cold medians only.
  static std::vector<Dot> dotsOf(const BenchmarkResult& result, double flops, double group_bytes,
                                 const QString& label, bool shown, bool baselines);
  // The copy reference's cold bandwidth in bytes per second; unset where no copy was timed.
  static std::optional<double> bandwidthOf(const BenchmarkResult& result);

 private:
  int dots_ = 0;
};

}  // namespace nova::ui
