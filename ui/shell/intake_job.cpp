#include "ui/shell/intake_job.h"

#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include "core/graph/intake_runner.h"
#include "core/worker/worker_client.h"
#include "core/worker/worker_error.h"

namespace nova::ui {

IntakeJob::IntakeJob(QString model, QString python, QString inputsDir, QObject* parent)
    : QObject(parent),
      model_(std::move(model)),
      python_(std::move(python)),
      inputsDir_(std::move(inputsDir)) {}

void IntakeJob::start() {
  QPointer<IntakeJob> self(this);
  std::string model = model_.toStdString(), python = python_.toStdString(), inputs = inputsDir_.toStdString();
  // Deliver on the UI thread, and only while the job still exists.
  auto post = [self](auto fn) {
    if (self)
      QMetaObject::invokeMethod(
          self.data(),
          [self, fn] {
            if (self) fn(self.data());
          },
          Qt::QueuedConnection);
  };
  QThread* t = QThread::create([=] {
    try {
      WorkerClient worker(python);
      IntakeRunner runner(worker);
      IntakeOptions options;
      options.inputs_dir = inputs;
      ModelGraph graph = runner.run(model, options, [&](const std::string& message, std::optional<double>) {
        QString m = QString::fromStdString(message);
        post([m](IntakeJob* j) { emit j->progress(m); });
      });
      double seconds = runner.last_seconds();
      post([graph = std::move(graph), seconds](IntakeJob* j) { emit j->succeeded(graph, seconds); });
    } catch (const WorkerError& e) {
      QString message = QString::fromStdString(e.what());
      QString details = QString::fromStdString(e.traceback());
      post([message, details](IntakeJob* j) { emit j->failed(message, details); });
    } catch (const std::exception& e) {
      QString message = QString::fromStdString(e.what());
      post([message](IntakeJob* j) { emit j->failed(message, QString()); });
    }
  });
  connect(t, &QThread::finished, t, &QObject::deleteLater);
  t->start();
}

}  // namespace nova::ui
