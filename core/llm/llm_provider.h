#pragma once
// One LLM provider as the user configured it in the shared settings file (Settings::llm_providers):
// which wire protocol it speaks, where, which model, how long and how random its answers are, and
// what a million tokens cost. The API key is not here and never written anywhere: it is read from
// the environment variable that `api_key_env` names, at the moment a request is sent.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nova {

enum class LlmProtocol { openai_chat, anthropic_messages };

std::string to_string(LlmProtocol protocol);
// "openai" or "anthropic"; throws std::runtime_error naming the value otherwise.
LlmProtocol llm_protocol_from_string(const std::string& text);

struct LlmProvider {
  std::string name;  // how the user calls it: "local", "openai", "anthropic"
  LlmProtocol protocol = LlmProtocol::openai_chat;
  // Up to the version path: "http://127.0.0.1:8000/v1" (OpenAI: + /chat/completions),
  // "https://api.anthropic.com/v1" (Anthropic: + /messages).
  std::string base_url;
  std::string model;
  int max_tokens = 8192;
  double temperature = 0.7;
  double usd_per_mtok_in = 0, usd_per_mtok_out = 0;
  std::string api_key_env;  // empty: the server needs no key (a local one)
  int connect_timeout_s = 10;
  int idle_timeout_s = 120;  // no byte for this long ends the attempt

  std::string endpoint() const;
  // The key from the environment; nullopt where api_key_env is empty. Throws std::runtime_error naming
  // the variable when it is named but unset or empty.
  std::optional<std::string> api_key() const;
  double cost_usd(long long tokens_in, long long tokens_out) const {
    return (tokens_in * usd_per_mtok_in + tokens_out * usd_per_mtok_out) / 1e6;
  }
};

// The provider named `name` among `providers`; throws std::runtime_error listing the known names.
const LlmProvider& find_llm_provider(const std::vector<LlmProvider>& providers, const std::string& name);

void to_json(nlohmann::json& j, const LlmProvider& p);
// Missing keys take their defaults; a wrong type or an unknown protocol is an error naming the key.
void from_json(const nlohmann::json& j, LlmProvider& p);

}  // namespace nova
