#pragma once
// Builds a stored version's CUDA source with NVRTC (no GPU needed) away from the UI thread, for the
// kernel editor's Build action and for every saved user edit: the log is stored as the version's
// build log (its status becomes built or failed) and the diagnostics come back for the editor's
// margin and the diagnostics list. Only the latest request's result is reported.
#include <future>
#include <vector>

#include <QObject>

#include "core/build/diagnostics.h"

namespace nova {
class ProjectStore;
}

namespace nova::ui {

class EditBuilder : public QObject {
  Q_OBJECT
 public:
  // `store` must outlive the builder; `arch`: the architecture NVRTC compiles for.
  explicit EditBuilder(ProjectStore& store, QString arch = "sm_90", QObject* parent = nullptr);
  ~EditBuilder() override;  // waits for a build under way

  // Compiles version `id`'s stored source; built() follows on the UI thread.
  void build(qint64 id);
  bool busy() const { return pending_ > 0; }

 signals:
  void started(qint64 id);
  // `summary`: one sentence (errors and warnings counted, or NVRTC's own failure).
  void built(qint64 id, bool ok, const std::vector<nova::Diagnostic>& diagnostics, const QString& summary);

 private:
  ProjectStore& store_;
  QString arch_;
  unsigned serial_ = 0;
  int pending_ = 0;
  std::vector<std::future<void>> running_;
};

}  // namespace nova::ui
