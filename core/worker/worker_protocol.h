#pragma once
// The messages of the worker protocol (docs/WORKER_PROTOCOL.md), core's side: the requests,
// cancels and shutdowns core sends, and the checks of what a worker sends back (its hello, its
// typed errors). The worker's side is resources/python/nova_worker/protocol.py; message and result
// layouts are declared once in nova_worker/schemas.py.
#include <string>

#include <nlohmann/json.hpp>

#include "core/worker/worker_error.h"
#include "core/worker/worker_info.h"

namespace nova {

class WorkerProtocol {
 public:
  static constexpr int kVersion = 2;

  // {"type": "request", "id", "protocol", "cmd", "args"}
  static nlohmann::json request(int id, const std::string& cmd, const nlohmann::json& args);
  // {"type": "cancel", "id"}: the worker stops the request at its next safe point.
  static nlohmann::json cancel(int id);
  // {"type": "shutdown"}: the worker exits once the requests before it are served.
  static nlohmann::json shutdown();

  // The worker's facts from its hello line; throws WorkerError(Protocol) for anything but a hello
  // of kVersion, naming both versions. `worker`: where the worker came from, for the message.
  static WorkerInfo check_hello(const nlohmann::json& hello, const std::string& worker);
  // An error message's "error" object (schemas.ErrorInfo) as the WorkerError to throw.
  static WorkerError error_from(const nlohmann::json& error);
  // "user_error" -> UserError, ...; an unknown kind is Internal.
  static WorkerError::Kind error_kind(const std::string& kind);
};

}  // namespace nova
