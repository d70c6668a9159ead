#pragma once
// The profile's place in the main window: the timeline (with kernel search) in the Timeline dock
// and the hot-op table in the Hot ops dock, or each dock's placeholder saying what fills it. A trace
// is shown only against the graph it was recorded from; opening another model clears both, so
// nothing of one model's profile is shown beside another model.
#include <QObject>
#include <QString>

#include "core/graph/model_graph.h"

namespace nova::ui {

class ProfilePanel;
class StageDocks;

class TraceDocks : public QObject {
  Q_OBJECT
 public:
  TraceDocks(StageDocks& docks, ProfilePanel& panel, QObject* parent = nullptr);

  // Reads, checks and shows a recorded trace; false with the message when it cannot be shown
  // (unreadable, or recorded from another graph). What was shown before stays only on success.
  bool open(const QString& path, const ModelGraph* graph, QString* message);
  // Back to the placeholders: nothing of the previous model's profile stays.
  void clear();
  bool showing() const { return showing_; }

 private:
  StageDocks& docks_;
  ProfilePanel& panel_;
  bool showing_ = false;
};

}  // namespace nova::ui
