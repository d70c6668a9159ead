#pragma once
// Colours for "share of GPU time": a ramp from cool grey (no time) to hot red (most of it), so the
// graph view can colour nodes by where the GPU time goes and the hot-op table and the timeline agree.
#include <QColor>
#include <QHash>

#include "core/trace/attribution.h"

namespace nova::ui {

class SharePalette {
 public:
  // share in [0, 1]; anything outside is clamped.
  static QColor colour(double share);
  // Node id -> colour for every node with GPU time.
  static QHash<int, QColor> forNodes(const AttributionResult& result);
};

}  // namespace nova::ui
