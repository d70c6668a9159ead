#pragma once
// What running work sees of its job: where to report progress and log lines, its cancel token and
// its time budget. The JobQueue creates one per job and forwards reports to its listener.
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "core/jobs/cancel_token.h"

namespace nova {

class JobContext {
 public:
  using Report = std::function<void(const std::string& message, std::optional<double> fraction, bool is_log)>;

  JobContext(CancelToken token, std::chrono::milliseconds budget, Report report, int device = -1)
      : token_(std::move(token)),
        budget_(budget),
        report_(std::move(report)),
        started_(std::chrono::steady_clock::now()),
        device_(device) {}

  void progress(const std::string& message, std::optional<double> fraction = std::nullopt) {
    if (report_) report_(message, fraction, false);
  }
  void log(const std::string& line) {
    if (report_) report_(line, std::nullopt, true);
  }
  const CancelToken& token() const { return token_; }
  std::chrono::milliseconds budget() const { return budget_; }
  // The GPU the job runs on (its lane's device); -1 for CPU jobs.
  int device() const { return device_; }
  // Budget left (the whole budget for a job without one: callers treat 0 as "none").
  std::chrono::milliseconds remaining() const {
    if (budget_.count() == 0) return budget_;
    auto used =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_);
    return std::max(std::chrono::milliseconds(1), budget_ - used);
  }

 private:
  CancelToken token_;
  std::chrono::milliseconds budget_;
  Report report_;
  std::chrono::steady_clock::time_point started_;
  int device_;
};

}  // namespace nova
