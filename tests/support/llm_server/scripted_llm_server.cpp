#include "support/llm_server/scripted_llm_server.h"

#include <fstream>
#include <stdexcept>

#include "support/test_paths.h"

namespace nova::test {

std::filesystem::path ScriptedLlmServer::script_program() {
  return fixtures_dir().parent_path() / "support" / "llm_server" / "scripted_llm_server.py";
}

ScriptedLlmServer::ScriptedLlmServer(const nlohmann::json& script, const std::filesystem::path& folder) {
  std::filesystem::create_directories(folder);
  const auto script_file = folder / "script.json";
  log_ = folder / "requests.jsonl";
  std::filesystem::remove(log_);
  std::ofstream(script_file) << script.dump(2);
  if (!std::filesystem::exists(script_program()))
    throw std::runtime_error("missing test program " + script_program().string());
  process_.start({"python3", script_program().string(), script_file.string(), "--log", log_.string()},
                 ChildProcess::minimal_env());
  auto line = process_.read_line(std::chrono::seconds(20));
  if (!line || line->rfind("PORT ", 0) != 0)
    throw std::runtime_error("the scripted LLM server did not start: " + process_.stderr_text());
  port_ = std::stoi(line->substr(5));
}

ScriptedLlmServer::~ScriptedLlmServer() { process_.terminate(std::chrono::milliseconds(200)); }

LlmProvider ScriptedLlmServer::provider(LlmProtocol protocol) const {
  LlmProvider p;
  p.name = protocol == LlmProtocol::anthropic_messages ? "scripted-anthropic" : "scripted-openai";
  p.protocol = protocol;
  p.base_url = "http://127.0.0.1:" + std::to_string(port_) + "/v1";
  p.model = "scripted-model";
  p.max_tokens = 4096;
  p.usd_per_mtok_in = 3;
  p.usd_per_mtok_out = 15;
  p.connect_timeout_s = 5;
  p.idle_timeout_s = 5;
  return p;
}

std::vector<nlohmann::json> ScriptedLlmServer::requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream in(log_);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace nova::test
