#include "ui/graph/op_class_palette.h"

#include <algorithm>
#include <cmath>

namespace nova::ui {

QColor OpClassPalette::fill(OpClass c) {
  switch (c) {
    case OpClass::Convolution:
      return QColor("#9ecae1");
    case OpClass::Matmul:
      return QColor("#f4a582");
    case OpClass::Elementwise:
      return QColor("#b8e186");
    case OpClass::Reduction:
      return QColor("#fdd576");
    case OpClass::Normalization:
      return QColor("#c9b3dd");
    case OpClass::DataMovement:
      return QColor("#d9d9d9");
    case OpClass::Other:
      return QColor("#f5f5f5");
  }
  return QColor("#f5f5f5");
}

QColor OpClassPalette::border(OpClass c) { return fill(c).darker(170); }

QString OpClassPalette::name(OpClass c) { return QString::fromStdString(to_string(c)).replace('_', ' '); }

const std::vector<OpClass>& OpClassPalette::classes() {
  static const std::vector<OpClass> all{OpClass::Convolution, OpClass::Matmul,        OpClass::Elementwise,
                                        OpClass::Reduction,   OpClass::Normalization, OpClass::DataMovement,
                                        OpClass::Other};
  return all;
}

QColor OpClassPalette::textOn(const QColor& fill) {
  // WCAG relative luminance: white text wins on fills darker than about 0.18.
  auto channel = [](int c) {
    const double v = c / 255.0;
    return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
  };
  const double l = 0.2126 * channel(fill.red()) + 0.7152 * channel(fill.green()) + 0.0722 * channel(fill.blue());
  return l < 0.18 ? QColor(Qt::white) : QColor("#1a1a1a");
}

QColor OpClassPalette::heat(double share) {
  share = std::clamp(share, 0.0, 1.0);
  // Through three stops so that small shares stay distinguishable from zero.
  const QColor stops[] = {QColor("#fff7bc"), QColor("#fd8d3c"), QColor("#bd0026")};
  double t = share * 2;
  int i = std::min(1, static_cast<int>(t));
  double f = t - i;
  auto mix = [&](int a, int b) { return static_cast<int>(a + (b - a) * f); };
  return QColor(mix(stops[i].red(), stops[i + 1].red()), mix(stops[i].green(), stops[i + 1].green()),
                mix(stops[i].blue(), stops[i + 1].blue()));
}

}  // namespace nova::ui
