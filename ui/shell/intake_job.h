#pragma once
// Runs intake of one model in the background (a worker process driven from a QThread) and hands
// the graph, or a plain error with the user's traceback, back on the UI thread. A newer job makes
// an older one's result irrelevant: the window ignores results of superseded jobs.
#include <QObject>
#include <QString>

#include "core/graph/model_graph.h"

namespace nova::ui {

class IntakeJob : public QObject {
  Q_OBJECT
 public:
  IntakeJob(QString model, QString python, QString inputsDir, QObject* parent = nullptr);
  void start();
  QString model() const { return model_; }

 signals:
  void progress(const QString& message);
  // Exactly one of these arrives, on the UI thread.
  void succeeded(const nova::ModelGraph& graph, double seconds);
  void failed(const QString& message, const QString& details);

 private:
  QString model_, python_, inputsDir_;
};

}  // namespace nova::ui
