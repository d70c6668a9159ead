#include "ui/shell/request_tracker.h"

namespace nova::ui {

void RequestTracker::track(const QString& request, int job) { latest_.insert(request, job); }

std::optional<QString> RequestTracker::requestOf(int job) const {
  for (auto it = latest_.cbegin(); it != latest_.cend(); ++it)
    if (it.value() == job) return it.key();
  return std::nullopt;
}

void RequestTracker::forget(const QString& request) { latest_.remove(request); }

}  // namespace nova::ui
