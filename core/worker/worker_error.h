#pragma once
// A failed worker request, as the caller sees it. Thrown by WorkerClient::request() and
// WorkerConnection; the kind tells whose fault it was: the user's model (UserError, with the
// user's own traceback, file and line), core's request (BadRequest), the worker itself (Internal),
// a worker that died (Crashed) or overran its deadline (Timeout) and was replaced, a request
// cancelled at core's request (Cancelled), or a worker speaking another protocol (Protocol).
// Mirrors the worker's schemas.ErrorInfo (resources/python/nova_worker/schemas.py).
#include <stdexcept>
#include <string>

namespace nova {

class WorkerError : public std::runtime_error {
 public:
  enum class Kind { UserError, Timeout, Crashed, Protocol, Internal, BadRequest, Cancelled };

  WorkerError(Kind kind, const std::string& message, std::string traceback = {}, std::string file = {},
              int line = 0)
      : std::runtime_error(message),
        kind_(kind),
        traceback_(std::move(traceback)),
        file_(std::move(file)),
        line_(line) {}

  Kind kind() const { return kind_; }
  const std::string& traceback() const { return traceback_; }  // the user's frames only
  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  Kind kind_;
  std::string traceback_;
  std::string file_;
  int line_;
};

}  // namespace nova
