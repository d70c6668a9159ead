#pragma once
// Why a worker command gave no result, as a plain sentence plus a kind the caller can act on:
// "worker crashed: SIGSEGV while validating candidate 3" (Crashed), a watchdog kill past the
// budget (TimedOut), the user's cancel (Cancelled), a worker that ended without an answer (Failed),
// or an error the worker reported: the user's model raised (UserError, with its file and line and
// the user's own traceback), core's request was malformed (BadRequest), the worker itself failed
// (Internal); or a worker that speaks another protocol version (Protocol).
#include <stdexcept>
#include <string>

namespace nova {

class WorkerRunError : public std::runtime_error {
 public:
  enum class Kind { Crashed, TimedOut, Cancelled, Failed, UserError, BadRequest, Internal, Protocol };
  WorkerRunError(Kind kind, const std::string& message, std::string log_tail = {})
      : std::runtime_error(message), kind_(kind), log_tail_(std::move(log_tail)) {}
  WorkerRunError(Kind kind, const std::string& message, std::string log_tail, std::string file, int line,
                 std::string traceback)
      : std::runtime_error(message),
        kind_(kind),
        log_tail_(std::move(log_tail)),
        file_(std::move(file)),
        line_(line),
        traceback_(std::move(traceback)) {}
  Kind kind() const { return kind_; }
  const std::string& log_tail() const { return log_tail_; }  // the worker's last stderr lines
  const std::string& file() const { return file_; }          // UserError: the user's file, else empty
  int line() const { return line_; }                         // UserError: its line, else 0
  const std::string& traceback() const { return traceback_; }

 private:
  Kind kind_;
  std::string log_tail_;
  std::string file_;
  int line_ = 0;
  std::string traceback_;
};

}  // namespace nova
