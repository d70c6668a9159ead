#include "core/cli/job_progress_printer.h"

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <fmt/format.h>

namespace nova {

JobQueue::Listener job_progress_printer() {
  struct Seen {
    std::mutex mutex;
    std::map<int, std::pair<std::string, std::chrono::steady_clock::time_point>> last;
  };
  auto seen = std::make_shared<Seen>();
  return [seen](const JobInfo& info) {
    if (info.state != JobState::Running || info.message.empty()) return;
    std::lock_guard lock(seen->mutex);
    auto now = std::chrono::steady_clock::now();
    auto& [message, at] = seen->last[info.id];
    if (message == info.message || now - at < std::chrono::seconds(1)) return;
    message = info.message;
    at = now;
    std::cerr << fmt::format("  {} [{:3.0f}%, {:.0f} s] {}\n", info.title, 100 * info.progress, info.elapsed_s,
                             info.message);
  };
}

}  // namespace nova
