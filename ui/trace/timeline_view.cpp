#include "ui/trace/timeline_view.h"

#include <algorithm>
#include <cmath>

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

namespace nova::ui {
namespace {

QString format_ns(double ns) {
  double a = std::abs(ns);
  if (a >= 1e9) return QString::number(ns / 1e9, 'f', 3) + " s";
  if (a >= 1e6) return QString::number(ns / 1e6, 'f', 3) + " ms";
  if (a >= 1e3) return QString::number(ns / 1e3, 'f', 2) + " us";
  return QString::number(ns, 'f', 0) + " ns";
}

// A tick label as round as its step: "20 us", "2.5 ms", never "20.00 us".
QString format_tick(double ns, double step) {
  const double a = std::max(std::abs(ns), step);
  const double unit = a >= 1e9 ? 1e9 : a >= 1e6 ? 1e6 : a >= 1e3 ? 1e3 : 1;
  const char* name = unit == 1e9 ? " s" : unit == 1e6 ? " ms" : unit == 1e3 ? " us" : " ns";
  const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step / unit) - 1e-9)), 0, 6);
  return QString::number(ns / unit, 'f', decimals) + name;
}

// A step of 1, 2 or 5 times a power of ten giving about `target` ticks.
double tick_step(double span, int target) {
  double raw = span / std::max(1, target);
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  setMinimumSize(400, 120);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void TimelineView::setModel(std::shared_ptr<const TimelineModel> model) {
  model_ = std::move(model);
  hits_.clear();
  hit_ = -1;
  selected_node_ = -2;
  sel0_ = sel1_ = 0;
  cache_width_ = -1;
  fitAll();
}

void TimelineView::setIterations(std::vector<std::pair<std::uint64_t, std::uint64_t>> iterations, bool on_gpu) {
  iterations_ = std::move(iterations);
  iterations_on_gpu_ = on_gpu;
  update();
}

int TimelineView::plotWidth() const { return std::max(1, width() - kLabelWidth); }

void TimelineView::setRange(double t0, double t1) {
  if (t1 - t0 < 10) t1 = t0 + 10;  // 10 ns is as deep as a zoom goes
  if (t0 == t0_ && t1 == t1_) return;
  t0_ = t0;
  t1_ = t1;
  emit rangeChanged(t0_, t1_);
  update();
}

void TimelineView::fitAll() {
  if (!model_ || model_->item_count() == 0) return setRange(0, 1000);
  double span = static_cast<double>(model_->end_ns() - model_->begin_ns());
  setRange(static_cast<double>(model_->begin_ns()) - span * 0.01,
           static_cast<double>(model_->end_ns()) + span * 0.01);
}

void TimelineView::zoom(double factor, double anchor) {
  setRange(anchor - (anchor - t0_) * factor, anchor + (t1_ - anchor) * factor);
}

void TimelineView::pan(double fraction) {
  double d = (t1_ - t0_) * fraction;
  setRange(t0_ + d, t1_ + d);
}

void TimelineView::centreOn(double t) {
  double half = (t1_ - t0_) / 2;
  setRange(t - half, t + half);
}

int TimelineView::setSearch(const QString& text) {
  hits_ = model_ ? model_->find(text.toStdString()) : decltype(hits_){};
  hit_ = -1;
  if (!hits_.empty()) nextHit(1);
  update();
  return static_cast<int>(hits_.size());
}

void TimelineView::nextHit(int step) {
  if (hits_.empty()) return;
  int n = static_cast<int>(hits_.size());
  hit_ = ((hit_ < 0 ? (step > 0 ? -1 : 0) : hit_) + step + n) % n;
  const auto& it = model_->rows()[hits_[hit_].first].items[hits_[hit_].second];
  double t = (static_cast<double>(it.start) + static_cast<double>(it.end())) / 2;
  if (t < t0_ || t > t1_) centreOn(t);
  update();
}

void TimelineView::setSelection(double a, double b) {
  sel0_ = std::min(a, b);
  sel1_ = std::max(a, b);
  emit selectionChanged(sel0_, sel1_);
  update();
}

void TimelineView::selectNode(int node) {
  selected_node_ = node;
  if (model_) {
    auto [row, index] = model_->first_item_of_node(node);
    if (row >= 0) {
      const auto& it = model_->rows()[row].items[index];
      if (static_cast<double>(it.end()) < t0_ || static_cast<double>(it.start) > t1_)
        centreOn(static_cast<double>(it.start));
    }
  }
  update();
}

double TimelineView::timeAt(int x) const { return t0_ + (x - kLabelWidth) * (t1_ - t0_) / plotWidth(); }

int TimelineView::xOf(double t) const {
  return kLabelWidth + static_cast<int>(std::floor((t - t0_) / (t1_ - t0_) * plotWidth()));
}

int TimelineView::rowAt(int y) const {
  if (!model_ || y < kAxisHeight) return -1;
  int r = (y - kAxisHeight) / kRowHeight + vscroll_;
  return r < static_cast<int>(model_->rows().size()) ? r : -1;
}

std::pair<int, long> TimelineView::itemAt(QPoint pos) const {
  int row = rowAt(pos.y());
  if (row < 0 || pos.x() < kLabelWidth) return {-1, -1};
  double t = timeAt(pos.x());
  double slack = 2.0 * (t1_ - t0_) / plotWidth();  // two pixels either side
  long index = model_->item_at(static_cast<std::size_t>(row), t < 0 ? 0 : static_cast<std::uint64_t>(t),
                               static_cast<std::uint64_t>(slack));
  return {index < 0 ? -1 : row, index};
}

QString TimelineView::tooltipFor(int row, long index) const {
  if (!model_ || row < 0 || index < 0) return {};
  const auto& r = model_->rows()[row];
  const auto& it = r.items[index];
  QString text = QString("<b>%1</b><br>%2")
                     .arg(QString::fromStdString(model_->name(it.name)).toHtmlEscaped(),
                          format_ns(static_cast<double>(it.duration)));
  if (it.node >= 0) text += QString("<br>graph node %1").arg(it.node);
  const Trace* trace = model_->trace();
  if (r.kind == TimelineRow::Kind::Stream && trace && it.ref < trace->activities.size()) {
    const auto& a = trace->activities[it.ref];
    if (a.kind == ActivityKind::Kernel)
      text +=
          QString(
              "<br>grid (%1, %2, %3) block (%4, %5, %6)<br>%7 registers/thread, shared %8 B static + %9 B "
              "dynamic<br>correlation %10")
              .arg(a.grid[0])
              .arg(a.grid[1])
              .arg(a.grid[2])
              .arg(a.block[0])
              .arg(a.block[1])
              .arg(a.block[2])
              .arg(a.registers)
              .arg(a.shared.static_bytes)
              .arg(a.shared.dynamic_bytes)
              .arg(a.correlation);
    else
      text += QString("<br>%1 bytes").arg(static_cast<qulonglong>(a.bytes));
  }
  return text;
}

QString TimelineView::helpText() {
  return tr("<b>Keys</b> (as in Perfetto)<br>W / S: zoom in / out · Ctrl+wheel: zoom<br>"
            "A / D: pan left / right<br>. / , : next / previous search match<br>"
            "F: fit the selection (again: fit all) · Esc: clear the selection · drag: select a range<br>"
            "<b>Colours</b><br>one hue per graph node (the same in every row)<br>"
            "grey: GPU work outside graph nodes<br>orange: memory copy · brown: memset<br>"
            "darker: several kernels folded into one pixel (zoom in)");
}

QColor TimelineView::colourOf(const TimelineItem& item) const {
  if (item.kind() == ActivityKind::Memcpy) return QColor(0xd9, 0x8c, 0x1f);
  if (item.kind() == ActivityKind::Memset) return QColor(0xb0, 0x6a, 0x2e);
  if (item.node < 0) return QColor(0x80, 0x80, 0x88);
  // A stable hue per node, so one op keeps its colour across rows and zooms.
  int hue = static_cast<int>((static_cast<unsigned>(item.node) * 2654435761u) % 360u);
  return QColor::fromHsv(hue, 140, 200);
}

void TimelineView::ensureCache() {
  int w = plotWidth();
  if (cache_t0_ == t0_ && cache_t1_ == t1_ && cache_width_ == w && model_ &&
      cache_.size() == model_->rows().size())
    return;
  cache_.assign(model_ ? model_->rows().size() : 0, {});
  if (model_) {
    auto a = static_cast<std::uint64_t>(std::max(0.0, t0_));
    auto b = static_cast<std::uint64_t>(std::max(0.0, t1_));
    for (std::size_t r = 0; r < cache_.size(); ++r) cache_[r].items = model_->reduce_per_pixel(r, a, b, w);
  }
  cache_t0_ = t0_;
  cache_t1_ = t1_;
  cache_width_ = w;
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  const int w = plotWidth();
  painted_.assign(model_ ? model_->rows().size() : 0, 0);
  if (!model_) return;
  ensureCache();

  // Time axis.
  p.fillRect(QRect(0, 0, width(), kAxisHeight), palette().window());
  p.setPen(palette().text().color());
  double origin = static_cast<double>(model_->begin_ns());
  double step = tick_step(t1_ - t0_, std::max(2, w / 120));
  for (double t = std::ceil((t0_ - origin) / step) * step + origin; t <= t1_; t += step) {
    int x = xOf(t);
    p.drawLine(x, kAxisHeight - 6, x, kAxisHeight);
    p.drawText(x + 3, kAxisHeight - 8, format_tick(t - origin, step));
  }
  p.drawText(QRect(4, 0, kLabelWidth - 8, kAxisHeight), Qt::AlignVCenter | Qt::AlignLeft,
             tr("? keys, colours"));

  const QFontMetrics fm(font());
  QHash<QRgb, QVector<QRect>> batches;  // rectangles by colour: one brush change per colour
  struct Label {
    QRect rect;
    QString text;
  };
  std::vector<Label> labels;
  QVector<QRect> highlighted;
  const auto& rows = model_->rows();
  int visible_rows = (height() - kAxisHeight) / kRowHeight + 1;
  for (int vr = 0; vr < visible_rows; ++vr) {
    int r = vr + vscroll_;
    if (r >= static_cast<int>(rows.size())) break;
    int y = kAxisHeight + vr * kRowHeight;
    const auto& row = rows[r];
    if (vr % 2) p.fillRect(QRect(kLabelWidth, y, w, kRowHeight), palette().alternateBase());
    for (const auto& px : cache_[r].items) {
      const auto& it = row.items[px.first];
      QRect rc(kLabelWidth + px.x0, y + 2, px.x1 - px.x0, kRowHeight - 4);
      QColor c = px.count > 1 ? colourOf(it).darker(125) : colourOf(it);
      batches[c.rgb()].push_back(rc);
      if (selected_node_ >= -1 && it.node == selected_node_) highlighted.push_back(rc);
      if (rc.width() > 40 && px.count == 1)
        labels.push_back(
            {rc.adjusted(3, 0, -2, 0),
             fm.elidedText(QString::fromStdString(model_->name(it.name)), Qt::ElideRight, rc.width() - 5)});
    }
    painted_[r] = static_cast<int>(cache_[r].items.size());
  }
  p.setPen(Qt::NoPen);
  for (auto it = batches.begin(); it != batches.end(); ++it) {
    p.setBrush(QColor::fromRgb(it.key()));
    p.drawRects(it.value());
  }
  p.setPen(QColor(0x20, 0x20, 0x20));
  for (const auto& l : labels) p.drawText(l.rect, Qt::AlignVCenter | Qt::AlignLeft, l.text);
  if (!highlighted.isEmpty()) {
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(QColor(0xff, 0xd0, 0x00), 2));
    p.drawRects(highlighted);
  }
  // Search hits in view: a marker line under each (at most one per pixel: they come from the cache).
  if (hit_ >= 0) {
    const auto& h = hits_[hit_];
    const auto& it = rows[h.first].items[h.second];
    int vr = static_cast<int>(h.first) - vscroll_;
    if (vr >= 0 && vr < visible_rows) {
      int x0 = std::max(kLabelWidth, xOf(static_cast<double>(it.start)));
      int x1 = std::max(x0 + 2, xOf(static_cast<double>(it.end())));
      p.setPen(QPen(QColor(0xe0, 0x20, 0x60), 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRect(x0, kAxisHeight + vr * kRowHeight + 1, x1 - x0, kRowHeight - 2));
    }
  }

  // Range selection with its duration.
  if (sel1_ > sel0_) {
    int x0 = std::max(kLabelWidth, xOf(sel0_)), x1 = std::min(width(), xOf(sel1_));
    p.fillRect(QRect(x0, kAxisHeight, std::max(1, x1 - x0), height()), QColor(0x30, 0x70, 0xd0, 50));
    p.setPen(QColor(0x30, 0x70, 0xd0));
    p.drawLine(x0, kAxisHeight, x0, height());
    p.drawLine(x1, kAxisHeight, x1, height());
    QString d = format_ns(sel1_ - sel0_);
    QRect box(x0 + 4, kAxisHeight + 2, fm.horizontalAdvance(d) + 8, fm.height() + 2);
    p.fillRect(box, QColor(0x30, 0x70, 0xd0));
    p.setPen(Qt::white);
    p.drawText(box, Qt::AlignCenter, d);
  }

  // Iteration boundaries: a dashed line across the rows, the iteration's number under the rows.
  painted_iterations_ = 0;
  int last_label_x = -1000;
  // The numbers go under the last row (over the rows where they would not fit), clear of the kernels.
  const int label_y = std::min(kAxisHeight + static_cast<int>(rows.size()) * kRowHeight + 2, height() - fm.height());
  for (auto [t, index] : iterations_) {
    const double at = static_cast<double>(t);
    if (at < t0_ || at > t1_) continue;
    const int x = xOf(at);
    p.setPen(QPen(QColor(0x60, 0x60, 0x60), 1, Qt::DashLine));
    p.drawLine(x, kAxisHeight, x, height());
    const QString label = iterations_on_gpu_ ? tr("iter %1").arg(index) : tr("iter %1 (host)").arg(index);
    if (x - last_label_x > fm.horizontalAdvance(label) + 10) {  // labels never overlap
      const QRect box(x + 2, label_y, fm.horizontalAdvance(label) + 6, fm.height());
      p.fillRect(box, QColor(255, 255, 255, 210));
      p.setPen(QColor(0x40, 0x40, 0x40));
      p.drawText(box, Qt::AlignCenter, label);
      last_label_x = x;
    }
    ++painted_iterations_;
  }

  // Row labels last, over anything that strayed.
  p.fillRect(QRect(0, kAxisHeight, kLabelWidth, height()), palette().window());
  p.setPen(palette().text().color());
  for (int vr = 0; vr < visible_rows; ++vr) {
    int r = vr + vscroll_;
    if (r >= static_cast<int>(rows.size())) break;
    p.drawText(QRect(6, kAxisHeight + vr * kRowHeight, kLabelWidth - 8, kRowHeight), Qt::AlignVCenter,
               QString::fromStdString(rows[r].label));
  }
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  double dy = e->angleDelta().y() / 120.0;
  if (e->modifiers() & Qt::ControlModifier) {
    zoom(std::pow(0.8, dy), timeAt(static_cast<int>(e->position().x())));
  } else if (e->modifiers() & Qt::ShiftModifier || e->angleDelta().x() != 0) {
    pan(-(e->angleDelta().x() ? e->angleDelta().x() / 120.0 : dy) * 0.1);
  } else if (model_) {
    int max_scroll =
        std::max(0, static_cast<int>(model_->rows().size()) - (height() - kAxisHeight) / kRowHeight);
    vscroll_ = std::clamp(vscroll_ - static_cast<int>(dy), 0, max_scroll);
    update();
  }
  e->accept();
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
  double centre = (t0_ + t1_) / 2;
  QPoint cursor = mapFromGlobal(QCursor::pos());
  double anchor = rect().contains(cursor) && cursor.x() > kLabelWidth ? timeAt(cursor.x()) : centre;
  switch (e->key()) {
    case Qt::Key_W:
      zoom(0.8, anchor);
      break;
    case Qt::Key_S:
      zoom(1.25, anchor);
      break;
    case Qt::Key_A:
      pan(-0.1);
      break;
    case Qt::Key_D:
      pan(0.1);
      break;
    case Qt::Key_Period:
      nextHit(1);
      break;
    case Qt::Key_Comma:
      nextHit(-1);
      break;
    case Qt::Key_F:
      if (sel1_ > sel0_ && !(std::abs(t0_ - sel0_) < 1 && std::abs(t1_ - sel1_) < 1))
        setRange(sel0_, sel1_);
      else
        fitAll();
      break;
    case Qt::Key_Question:
      QToolTip::showText(mapToGlobal(QPoint(kLabelWidth, kAxisHeight)), helpText(), this);
      break;
    case Qt::Key_Escape:
      setSelection(0, 0);
      selected_node_ = -2;
      update();
      break;
    default:
      QWidget::keyPressEvent(e);
      return;
  }
  e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  press_pos_ = e->pos();
  press_t0_ = t0_;
  press_t1_ = t1_;
  moved_ = false;
  drag_ = e->modifiers() & Qt::ShiftModifier ? Drag::Select : Drag::Pan;
  e->accept();
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  if (drag_ == Drag::None) return;
  if ((e->pos() - press_pos_).manhattanLength() > 3) moved_ = true;
  if (!moved_) return;
  double ns_per_px = (press_t1_ - press_t0_) / plotWidth();
  if (drag_ == Drag::Pan) {
    double d = -(e->pos().x() - press_pos_.x()) * ns_per_px;
    setRange(press_t0_ + d, press_t1_ + d);
  } else {
    setSelection(timeAt(press_pos_.x()), timeAt(e->pos().x()));
  }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
  if (drag_ != Drag::None && !moved_) {
    auto [row, index] = itemAt(e->pos());
    if (row >= 0) {
      int node = model_->rows()[row].items[index].node;
      selected_node_ = node;
      update();
      emit kernelClicked(node);
    }
  }
  drag_ = Drag::None;
}

bool TimelineView::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    auto [row, index] = itemAt(help->pos());
    if (row >= 0)
      QToolTip::showText(help->globalPos(), tooltipFor(row, index), this);
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(e);
}

}  // namespace nova::ui
