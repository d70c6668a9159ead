#pragma once
// Cancellation as a type: a token shared by the one who may cancel (the job queue, the user's
// cancel button, a superseding request, the watchdog) and the work that must stop. Copies share
// one flag; work polls cancelled() or calls throw_if_cancelled() at safe points.
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

namespace nova {

// Thrown by work that noticed its token was cancelled; the queue records it as cancelled.
class Cancelled : public std::runtime_error {
 public:
  explicit Cancelled(const std::string& what = "cancelled") : std::runtime_error(what) {}
};

class CancelToken {
 public:
  CancelToken() : state_(std::make_shared<State>()) {}
  void cancel(const std::string& reason = "cancelled") {
    bool expected = false;
    if (state_->flag.compare_exchange_strong(expected, true)) state_->reason = reason;
  }
  bool cancelled() const { return state_->flag.load(); }
  // Why it was cancelled ("cancelled", "superseded", "budget"); empty while not cancelled.
  std::string reason() const { return cancelled() ? state_->reason : std::string(); }
  void throw_if_cancelled() const {
    if (cancelled()) throw Cancelled(state_->reason);
  }

 private:
  struct State {
    std::atomic<bool> flag{false};
    std::string reason;
  };
  std::shared_ptr<State> state_;
};

}  // namespace nova
