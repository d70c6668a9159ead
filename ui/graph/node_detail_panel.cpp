#include "ui/graph/node_detail_panel.h"

#include <QScrollArea>
#include <QUrl>
#include <QUrlQuery>
#include <QVBoxLayout>

namespace nova::ui {
namespace {

QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString shape(const TensorInfo& t) {
  QStringList dims, strides;
  for (auto d : t.shape) dims << QString::number(d);
  for (auto s : t.stride) strides << QString::number(s);
  return QString("[%1] %2 <span style='color:#777'>stride [%3]</span>")
      .arg(dims.join(", "), esc(t.dtype), strides.join(", "));
}

// 1.2 GFLOP, 3.4 MB
QString si(double v, const char* unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (v >= 1000 && i < 5) v /= 1000, ++i;
  return QString("%1 %2%3").arg(v, 0, 'f', v < 10 ? 2 : 1).arg(prefixes[i]).arg(unit);
}

QString row(const QString& key, const QString& value) {
  return QString("<tr><td style='color:#555; padding-right:8px' valign=top>%1</td><td>%2</td></tr>")
      .arg(key, value);
}

}  // namespace

NodeDetailPanel::NodeDetailPanel(QWidget* parent) : QWidget(parent), label_(new QLabel(this)) {
  label_->setWordWrap(true);
  label_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  label_->setTextInteractionFlags(Qt::TextBrowserInteraction);
  label_->setMargin(8);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(label_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll);
  connect(label_, &QLabel::linkActivated, this, &NodeDetailPanel::activateLink);
  clear();
}

void NodeDetailPanel::clear() {
  label_->setText("<i>Select a node to see its shapes, cost and source line.</i>");
}

void NodeDetailPanel::activateLink(const QString& link) {
  QUrl url(link);
  if (url.scheme() != "source") return;
  QUrlQuery q(url);
  emit openSourceRequested(q.queryItemValue("file", QUrl::FullyDecoded), q.queryItemValue("line").toInt());
}

void NodeDetailPanel::showNode(const ModelGraph& graph, int id) {
  const GraphNode* n = graph.node(id);
  if (!n) return clear();
  QString html =
      QString("<h3 style='margin:0'>%1 <span style='color:#777; font-weight:normal'>#%2</span></h3>")
          .arg(esc(n->op))
          .arg(n->id);
  html += "<table>";
  html += row("target", esc(n->target));
  html += row("class", esc(to_string(n->op_class)));
  for (const auto& a : n->args) {
    QString value;
    if (!a.tensor.empty()) {
      value = "<b>" + esc(a.tensor) + "</b>";
      const TensorInfo* t = nullptr;
      if (const GraphNode* p = graph.producer(a.tensor)) {
        for (const auto& o : p->outputs)
          if (o.name == a.tensor) t = &o;
      } else {
        for (const auto& in : graph.inputs)
          if (in.name == a.tensor) t = &in;
        for (const auto& p : graph.params)
          if (p.graph_input == a.tensor) {
            t = &p.tensor;
            value += " <span style='color:#777'>(" + QString(p.is_buffer ? "buffer " : "parameter ") +
                     esc(p.name) + ")</span>";
          }
      }
      if (t) value += "<br>" + shape(*t);
    } else {
      value = esc(a.constant.dump());
    }
    html += row("in: " + esc(a.name), value);
  }
  for (const auto& o : n->outputs) html += row("out", "<b>" + esc(o.name) + "</b><br>" + shape(o));
  html += row("FLOPs", si(n->flops, "FLOP"));
  html += row("bytes", si(n->bytes, "B"));
  if (n->bytes > 0) html += row("intensity", QString("%1 FLOP/B").arg(n->flops / n->bytes, 0, 'f', 2));
  if (const FusionGroup* g = graph.group_of(id))
    html += row("fusion", QString("group %1: %2").arg(g->id).arg(esc(g->kind)));
  html += row("scope", n->scope.empty() ? "<i>top level</i>" : esc(n->scope));
  if (!n->scope_type.empty()) html += row("module", esc(n->scope_type));
  if (!n->file.empty()) {
    QUrl url;
    url.setScheme("source");
    url.setPath("open");
    QUrlQuery q;
    q.addQueryItem("file", QString::fromStdString(n->file));
    q.addQueryItem("line", QString::number(n->line));
    url.setQuery(q);
    html += row("source", QString("<a href='%1'>%2:%3</a>")
                              .arg(url.toString(QUrl::FullyEncoded).toHtmlEscaped(), esc(n->file))
                              .arg(n->line));
    if (!n->source_text.empty()) html += row("", "<code>" + esc(n->source_text) + "</code>");
  }
  html += "</table>";
  label_->setText(html);
}

void NodeDetailPanel::showScope(const GraphViewModel& model, const std::string& scope) {
  const auto ids = model.nodes_in(scope);
  double flops = 0, bytes = 0;
  std::map<std::string, int> ops;
  std::string type;
  for (int id : ids) {
    const GraphNode* n = model.graph().node(id);
    flops += n->flops;
    bytes += n->bytes;
    ++ops[n->op];
    if (n->scope == scope && type.empty()) type = n->scope_type;
  }
  QString html = QString("<h3 style='margin:0'>%1</h3><table>").arg(esc(scope));
  if (!type.empty()) html += row("module", esc(type));
  html += row("state", model.is_collapsed(scope) ? "collapsed (double-click to expand)" : "expanded");
  html += row("ops", QString::number(ids.size()));
  html += row("FLOPs", si(flops, "FLOP"));
  html += row("bytes", si(bytes, "B"));
  QStringList counts;
  for (const auto& [op, count] : ops) counts << QString("%1 × %2").arg(count).arg(esc(op));
  html += row("by op", counts.join("<br>"));
  html += "</table>";
  label_->setText(html);
}

}  // namespace nova::ui
