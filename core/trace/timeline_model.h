#pragma once
// The timeline's data: one row per (device, stream), an op row of attributed graph-node spans,
// and an NVTX row where markers arrived. Items of a row are sorted by start with a running maximum
// of their ends, so the visible window is two binary searches (firstIndex/lastIndex in Qt Creator's
// tracing library), and reduce_per_pixel() returns at most one item per pixel of the view,
// folding runs of sub-pixel items (as Orbit and Tracy do). No Qt: the studio's TimelineView paints
// what this returns; the benchmark and the CI tests query it directly.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/model_graph.h"
#include "core/trace/attribution.h"
#include "core/trace/trace.h"

namespace nova {

// 24 bytes: a million of them fit the timeline's memory budget with room to spare.
struct TimelineItem {
  std::uint64_t start = 0;
  std::uint32_t duration = 0;  // ns, clamped at about 4.3 s
  std::uint32_t ref = 0;       // stream rows: Trace::activities index; op row: span index; NVTX: marker index
  std::int32_t node = -1;      // attributed graph node, -1 if none
  std::uint32_t name : 24 = 0;  // TimelineModel::name() index
  std::uint32_t kind_bits : 8 = 0;
  std::uint64_t end() const { return start + duration; }
  ActivityKind kind() const { return static_cast<ActivityKind>(kind_bits); }
  static TimelineItem make(std::uint64_t start, std::uint64_t end, std::uint32_t ref, int node,
                           std::uint32_t name, ActivityKind kind);
};
static_assert(sizeof(TimelineItem) == 24);

struct TimelineRow {
  enum class Kind { Ops, Stream, Nvtx };
  Kind kind = Kind::Stream;
  std::string label;
  std::uint32_t device = 0, stream = 0;
  std::vector<TimelineItem> items;     // sorted by start
  std::vector<std::uint64_t> max_end;  // max_end[i] = max(items[0..i].end)
};

// What one pixel column range of a row shows: one item, or a run of `count` folded items.
struct PixelItem {
  int x0 = 0, x1 = 0;       // pixels [x0, x1), x1 > x0
  std::uint32_t first = 0;  // item index of the first item drawn here
  std::uint32_t count = 1;  // items folded into this pixel range
};

class TimelineModel {
 public:
  TimelineModel() = default;
  TimelineModel(std::shared_ptr<const Trace> trace, const AttributionResult& attribution,
                const ModelGraph& graph);

  const std::vector<TimelineRow>& rows() const { return rows_; }
  const std::string& name(std::uint32_t i) const { return names_[i]; }
  const Trace* trace() const { return trace_.get(); }
  std::uint64_t begin_ns() const { return begin_; }
  std::uint64_t end_ns() const { return end_; }
  std::size_t item_count() const;

  // Items of `row` overlapping [t0, t1): indices [first, last).
  std::pair<std::size_t, std::size_t> visible(std::size_t row, std::uint64_t t0, std::uint64_t t1) const;
  // The items of [t0, t1) drawn into `width` pixels: at most one PixelItem per pixel, in order.
  std::vector<PixelItem> reduce_per_pixel(std::size_t row, std::uint64_t t0, std::uint64_t t1,
                                          int width) const;
  // The item under time t (within `slack` ns), preferring the shortest; -1 if none.
  long item_at(std::size_t row, std::uint64_t t, std::uint64_t slack = 0) const;
  // Every item of the whole trace whose name contains `text` (case-insensitive), in time order.
  std::vector<std::pair<std::size_t, std::size_t>> find(const std::string& text) const;
  // The first item (by start) attributed to `node` on any stream row: {row, index}, or {-1, -1}.
  std::pair<long, long> first_item_of_node(int node) const;

 private:
  void add_row(TimelineRow row);
  std::shared_ptr<const Trace> trace_;
  std::vector<TimelineRow> rows_;
  std::vector<std::string> names_;
  std::uint64_t begin_ = 0, end_ = 0;
  bool have_items_ = false;
};

}  // namespace nova
