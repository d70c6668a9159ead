#pragma once
#include <optional>

#include <QHash>
#include <QString>

namespace nova::ui {

// Which job answers each request the studio made of the open session ("intake", "generate",
// "profile", "evaluate:v12"): only a request's latest job counts, so the result of a job that a newer
// request replaced is never shown (hotspot's JobTracker). An evaluation moves from its build job to
// the GPU job the build queued.
class RequestTracker {
 public:
  void track(const QString& request, int job);  // `job` is now the request's latest
  // The request whose latest job this is; nullopt for a job a newer request replaced (or an unknown one).
  std::optional<QString> requestOf(int job) const;
  void forget(const QString& request);
  void clear() { latest_.clear(); }

 private:
  QHash<QString, int> latest_;
};

}  // namespace nova::ui
