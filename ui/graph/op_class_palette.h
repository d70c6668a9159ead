#pragma once
#include <QColor>
#include <QString>
#include <vector>

#include "core/graph/model_graph.h"

namespace nova::ui {

// The graph view's fixed colours: one readable fill per op class (dark text on all of them), and
// the heat ramp used when nodes are coloured by their share of GPU time. The legend reads both.
class OpClassPalette {
 public:
  static QColor fill(OpClass c);
  static QColor border(OpClass c);
  static QString name(OpClass c);  // "data movement"
  static const std::vector<OpClass>& classes();
  // share in [0, 1] -> pale yellow .. deep red
  static QColor heat(double share);
  // The text colour with the better contrast on `fill` (WCAG luminance): near-black or white.
  static QColor textOn(const QColor& fill);
};

}  // namespace nova::ui
