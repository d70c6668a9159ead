#pragma once
// Why a worker command gave no result, as a plain sentence plus a kind the caller can act on:
// "worker crashed: SIGSEGV while validating candidate 3" (Crashed), a watchdog kill past the
// budget (TimedOut), the user's cancel (Cancelled), or an error the worker reported (Failed).
#include <stdexcept>
#include <string>

namespace nova {

class WorkerRunError : public std::runtime_error {
 public:
  enum class Kind { Crashed, TimedOut, Cancelled, Failed };
  WorkerRunError(Kind kind, const std::string& message, std::string log_tail = {})
      : std::runtime_error(message), kind_(kind), log_tail_(std::move(log_tail)) {}
  Kind kind() const { return kind_; }
  const std::string& log_tail() const { return log_tail_; }  // the worker's last stderr lines

 private:
  Kind kind_;
  std::string log_tail_;
};

}  // namespace nova
