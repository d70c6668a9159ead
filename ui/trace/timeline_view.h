#pragma once
// The studio's CUPTI timeline: an op row and one row per (device, stream), painted from a
// TimelineModel. Keys as in Perfetto: W/S zoom, A/D pan, Ctrl+wheel zoom, F fit (the selection, then
// everything), Esc clear, `.`/`,` next/previous search hit. Drag pans, Shift+drag selects a time
// range and shows its duration; hovering shows a kernel's launch shape. Clicking a kernel emits
// kernelClicked(node); selectNode() highlights a node's kernels and brings the first into view.
// Level of detail: each row is drawn from TimelineModel::reduce_per_pixel(), so no more than one
// item per pixel is ever drawn; the per-row geometry is cached per (range, width), and rectangles are
// batched by colour. Iteration boundaries (the profiler's iteration marks) are dashed lines across
// the rows, numbered under them.
#include <memory>
#include <vector>

#include <QColor>
#include <QHash>
#include <QRect>
#include <QWidget>

#include "core/trace/timeline_model.h"

namespace nova::ui {

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineView(QWidget* parent = nullptr);

  void setModel(std::shared_ptr<const TimelineModel> model);
  // Where each profiled iteration began: (trace time in ns, iteration index). `on_gpu`: where it began
  // on the GPU (GpuIterations); otherwise the host's marks (Trace::iterations), labelled "(host)", since
  // the host runs ahead of the GPU's rows.
  void setIterations(std::vector<std::pair<std::uint64_t, std::uint64_t>> iterations, bool on_gpu = true);
  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& iterations() const { return iterations_; }
  bool iterationsOnGpu() const { return iterations_on_gpu_; }
  // The boundaries inside the visible range the last paint drew.
  int lastPaintedIterations() const { return painted_iterations_; }
  // The keys and the colours' meaning, shown on `?` (and named in the axis corner).
  static QString helpText();
  const TimelineModel* model() const { return model_.get(); }

  // The visible time range in trace nanoseconds.
  void setRange(double t0, double t1);
  double rangeStart() const { return t0_; }
  double rangeEnd() const { return t1_; }
  void fitAll();
  void zoom(double factor, double anchor_ns);  // factor < 1 zooms in
  void pan(double fraction);                   // of the visible span; negative: left

  // Search over the whole trace; jumps to the first hit. Returns the number of hits.
  int setSearch(const QString& text);
  void nextHit(int step = 1);
  int searchHits() const { return static_cast<int>(hits_.size()); }

  // The selected time range (Shift+drag); 0 duration when none.
  double selectionStart() const { return sel0_; }
  double selectionDuration() const { return sel1_ - sel0_; }
  void setSelection(double t0, double t1);

  int selectedNode() const { return selected_node_; }
  // Items drawn by the last paint per row: never more than the plot width.
  const std::vector<int>& lastPaintedItems() const { return painted_; }
  int plotWidth() const;
  // Item under a widget position: {row, index} or {-1, -1}.
  std::pair<int, long> itemAt(QPoint pos) const;
  QString tooltipFor(int row, long index) const;
  // Pixel position of a time, for tests and the benchmark.
  int xOf(double t) const;

 public slots:
  void selectNode(int node);

 signals:
  void kernelClicked(int node);  // -1 where the kernel belongs to no graph node
  void rangeChanged(double t0, double t1);
  void selectionChanged(double t0, double t1);

 protected:
  void paintEvent(QPaintEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void keyPressEvent(QKeyEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;
  bool event(QEvent*) override;

 private:
  std::vector<std::pair<std::uint64_t, std::uint64_t>> iterations_;
  bool iterations_on_gpu_ = true;
  int painted_iterations_ = 0;
  struct RowCache {
    std::vector<PixelItem> items;
  };
  double timeAt(int x) const;
  int rowAt(int y) const;
  QColor colourOf(const TimelineItem& item) const;
  void ensureCache();
  void centreOn(double t);

  std::shared_ptr<const TimelineModel> model_;
  double t0_ = 0, t1_ = 1;
  double sel0_ = 0, sel1_ = 0;
  int selected_node_ = -2;  // -2: nothing selected
  std::vector<std::pair<std::size_t, std::size_t>> hits_;
  int hit_ = -1;
  // Geometry cache, valid for (cache_t0_, cache_t1_, cache_width_).
  std::vector<RowCache> cache_;
  double cache_t0_ = -1, cache_t1_ = -1;
  int cache_width_ = -1;
  std::vector<int> painted_;
  // Mouse drag state.
  enum class Drag { None, Pan, Select } drag_ = Drag::None;
  QPoint press_pos_;
  double press_t0_ = 0, press_t1_ = 0;
  bool moved_ = false;
  int vscroll_ = 0;

  static constexpr int kLabelWidth = 150;
  static constexpr int kAxisHeight = 24;
  static constexpr int kRowHeight = 22;
};

}  // namespace nova::ui
