#include "ui/trace/profile_panel.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QVBoxLayout>

#include "core/trace/gpu_iterations.h"
#include "core/trace/timeline_model.h"
#include "core/trace/trace_identity_check.h"
#include "core/trace/trace_reader.h"
#include "ui/trace/hot_op_view.h"
#include "ui/trace/share_palette.h"
#include "ui/trace/timeline_view.h"

namespace nova::ui {

ProfilePanel::ProfilePanel(QWidget* parent)
    : QWidget(parent),
      timeline_(new TimelineView(this)),
      hot_(new HotOpView(this)),
      search_(new QLineEdit(this)),
      status_(new QLabel(this)) {
  search_->setPlaceholderText(tr("Search kernels (whole trace; . and , step)"));
  search_->setClearButtonEnabled(true);
  auto* bar = new QHBoxLayout;
  bar->addWidget(search_, 1);
  bar->addWidget(status_, 2);
  auto* top = new QWidget(this);
  auto* top_layout = new QVBoxLayout(top);
  top_layout->setContentsMargins(0, 0, 0, 0);
  top_layout->addLayout(bar);
  top_layout->addWidget(timeline_, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->setChildrenCollapsible(false);  // a divider never hides a panel
  split->addWidget(top);
  split->addWidget(hot_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);

  connect(search_, &QLineEdit::textChanged, this, [this](const QString& text) {
    timeline_->setSearch(text);
    updateStatus();
  });
  connect(timeline_, &TimelineView::selectionChanged, this, [this] { updateStatus(); });
  connect(timeline_, &TimelineView::kernelClicked, this, [this](int node) {
    hot_->selectNode(node);
    if (node >= 0) emit nodeSelected(node);
  });
  connect(hot_, &HotOpView::nodeSelected, this, [this](int node) {
    timeline_->selectNode(node);
    emit nodeSelected(node);
  });
  connect(hot_, &HotOpView::sendToGenerator, this, &ProfilePanel::sendToGenerator);
  connect(hot_, &HotOpView::sendToLlm, this, &ProfilePanel::sendToLlm);
}

void ProfilePanel::setProfile(std::shared_ptr<const Trace> trace, const AttributionResult& attribution,
                              const ModelGraph& graph) {
  attribution_ = attribution;
  summary_ = tr("%1 kernels, %2 us of GPU time, %3% attributed")
                 .arg(trace->kernel_count())
                 .arg(attribution.total_gpu_ns / 1e3, 0, 'f', 1)
                 .arg(attribution.attributed_fraction * 100, 0, 'f', 1);
  if (trace->stats.dropped_records) summary_ += tr(", %1 records dropped").arg(trace->stats.dropped_records);
  // Iteration boundaries where each iteration began on the GPU; the host's marks where the trace
  // does not say (they run ahead of the kernels).
  auto on_gpu = GpuIterations::starts(*trace);
  if (!on_gpu.empty() || trace->iterations.empty()) timeline_->setIterations(std::move(on_gpu), true);
  else timeline_->setIterations(trace->iterations, false);
  timeline_->setModel(std::make_shared<TimelineModel>(std::move(trace), attribution, graph));
  hot_->setAttribution(attribution);
  updateStatus();
}

bool ProfilePanel::openTrace(const QString& path, const ModelGraph& graph, QString* message) {
  std::shared_ptr<const Trace> trace;
  try {
    trace = std::make_shared<Trace>(TraceReader::read(path.toStdString()));
  } catch (const std::exception& e) {
    if (message) *message = tr("Cannot open the trace: %1").arg(e.what());
    return false;
  }
  // One model's kernels are never counted against another model's nodes.
  const std::string name = QFileInfo(path).fileName().toStdString();
  if (std::string problem = TraceIdentityCheck::problem(*trace, graph, name); !problem.empty()) {
    if (message) *message = tr("Trace refused: %1").arg(QString::fromStdString(problem));
    return false;
  }
  AttributionResult attribution = Attribution::compute(*trace, graph, DeviceCeilings{});
  const QString note = QString::fromStdString(TraceIdentityCheck::note(*trace, graph, name));
  if (message)
    *message = tr("%1: %2 kernels, %3% of GPU time attributed to graph nodes%4%5")
                   .arg(QFileInfo(path).fileName())
                   .arg(trace->kernel_count())
                   .arg(attribution.attributed_fraction * 100, 0, 'f', 1)
                   .arg(graph.nodes.empty() ? tr(" (open the model to name the nodes)") : QString())
                   .arg(note.isEmpty() ? QString() : QString(". ") + note);
  setProfile(std::move(trace), attribution, graph);
  if (!note.isEmpty()) summary_ += QString(" · ") + note;
  updateStatus();
  return true;
}

void ProfilePanel::clear() {
  attribution_ = {};
  summary_.clear();
  search_->clear();
  timeline_->setModel(nullptr);
  hot_->setAttribution({});
  updateStatus();
}

bool ProfilePanel::isEmpty() const { return summary_.isEmpty(); }

std::map<int, double> ProfilePanel::nodeShares() const {
  std::map<int, double> shares;
  for (const auto& n : attribution_.nodes) shares[n.id] = n.share;
  return shares;
}

void ProfilePanel::selectNode(int node) {
  timeline_->selectNode(node);
  hot_->selectNode(node);
}

QHash<int, QColor> ProfilePanel::nodeColours() const { return SharePalette::forNodes(attribution_); }

QString ProfilePanel::statusText() const { return status_->text(); }

void ProfilePanel::updateStatus() {
  QString text = summary_;
  if (!search_->text().isEmpty()) text += tr(" · %1 matches").arg(timeline_->searchHits());
  if (timeline_->selectionDuration() > 0)
    text += tr(" · selection %1 us").arg(timeline_->selectionDuration() / 1e3, 0, 'f', 2);
  status_->setText(text);
}

}  // namespace nova::ui
