#include "core/worker/worker_protocol.h"

#include <fmt/format.h>

namespace nova {
using nlohmann::json;

json WorkerProtocol::request(int id, const std::string& cmd, const json& args) {
  return {{"type", "request"}, {"id", id}, {"protocol", kVersion}, {"cmd", cmd}, {"args", args}};
}

json WorkerProtocol::cancel(int id) { return {{"type", "cancel"}, {"id", id}}; }

json WorkerProtocol::shutdown() { return {{"type", "shutdown"}}; }

WorkerInfo WorkerProtocol::check_hello(const json& hello, const std::string& worker) {
  if (!hello.is_object() || hello.value("type", "") != "hello")
    throw WorkerError(WorkerError::Kind::Protocol,
                      fmt::format("worker's first line is not a hello: {}", hello.dump().substr(0, 200)));
  WorkerInfo info = WorkerInfo::from_hello(hello);
  if (info.protocol != kVersion)
    throw WorkerError(WorkerError::Kind::Protocol,
                      fmt::format("the worker at {} speaks protocol {}, this Nova speaks {}: install the "
                                  "nova_worker package that came with this Nova",
                                  worker, info.protocol, kVersion));
  return info;
}

WorkerError::Kind WorkerProtocol::error_kind(const std::string& kind) {
  if (kind == "user_error") return WorkerError::Kind::UserError;
  if (kind == "bad_request") return WorkerError::Kind::BadRequest;
  if (kind == "cancelled") return WorkerError::Kind::Cancelled;
  return WorkerError::Kind::Internal;
}

WorkerError WorkerProtocol::error_from(const json& error) {
  if (!error.is_object())
    return WorkerError(WorkerError::Kind::Protocol, "the worker's error message carries no error object");
  const int line = error.contains("line") && error["line"].is_number_integer() ? error["line"].get<int>() : 0;
  return WorkerError(error_kind(error.value("kind", "")), error.value("message", "worker error"),
                     error.value("traceback", ""), error.value("file", ""), line);
}

}  // namespace nova
