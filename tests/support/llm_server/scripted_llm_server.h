#pragma once
// Starts tests/support/llm_server/scripted_llm_server.py (a loopback OpenAI- and Anthropic-compatible
// server that replays a script of answers and faults) as a child process for one test, and reads back
// the requests it received. The server ends with the object.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/llm/llm_provider.h"
#include "core/worker/child_process.h"

namespace nova::test {

class ScriptedLlmServer {
 public:
  // `script`: {"responses": [...]} (see the Python file); written into `folder` with `files` beside it.
  ScriptedLlmServer(const nlohmann::json& script, const std::filesystem::path& folder);
  ~ScriptedLlmServer();
  int port() const { return port_; }
  // A provider pointing at this server ("http://127.0.0.1:PORT/v1"), no key, short timeouts.
  LlmProvider provider(LlmProtocol protocol) const;
  // Every request received so far: {"path", "headers", "body"}.
  std::vector<nlohmann::json> requests() const;
  static std::filesystem::path script_program();

 private:
  ChildProcess process_;
  std::filesystem::path log_;
  int port_ = 0;
};

}  // namespace nova::test
