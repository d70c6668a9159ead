#include "ui/shell/trace_docks.h"

#include <QDockWidget>

#include "ui/shell/placeholder_panel.h"
#include "ui/shell/stage_docks.h"
#include "ui/trace/hot_op_view.h"
#include "ui/trace/profile_panel.h"

namespace nova::ui {

TraceDocks::TraceDocks(StageDocks& docks, ProfilePanel& panel, QObject* parent)
    : QObject(parent), docks_(docks), panel_(panel) {}

bool TraceDocks::open(const QString& path, const ModelGraph* graph, QString* message) {
  if (!panel_.openTrace(path, graph ? *graph : ModelGraph{}, message)) return false;
  // The hot-op table gets a dock of its own (tabbed with the editor): more rows than under the
  // timeline, and the Hot ops tab is the table, not a pointer to it.
  docks_.dock("timeline")->setWidget(&panel_);
  panel_.show();
  docks_.dock("hotops")->setWidget(panel_.hotOps());
  panel_.hotOps()->show();
  docks_.dock("timeline")->raise();
  docks_.dock("hotops")->raise();
  showing_ = true;
  return true;
}

void TraceDocks::clear() {
  panel_.clear();
  if (!showing_) return;
  showing_ = false;
  // setWidget() leaves the replaced widget with the dock, hidden: it returns on the next open().
  docks_.dock("timeline")->setWidget(docks_.placeholder("timeline"));
  docks_.placeholder("timeline")->show();
  docks_.dock("hotops")->setWidget(docks_.placeholder("hotops"));
  docks_.placeholder("hotops")->show();
  panel_.hide();
  panel_.hotOps()->hide();
}

}  // namespace nova::ui
