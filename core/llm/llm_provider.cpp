#include "core/llm/llm_provider.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace nova {

std::string to_string(LlmProtocol protocol) {
  return protocol == LlmProtocol::anthropic_messages ? "anthropic" : "openai";
}

LlmProtocol llm_protocol_from_string(const std::string& text) {
  if (text == "openai") return LlmProtocol::openai_chat;
  if (text == "anthropic") return LlmProtocol::anthropic_messages;
  throw std::runtime_error(fmt::format("protocol is '{}': expected openai or anthropic", text));
}

std::string LlmProvider::endpoint() const {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + (protocol == LlmProtocol::anthropic_messages ? "/messages" : "/chat/completions");
}

std::optional<std::string> LlmProvider::api_key() const {
  if (api_key_env.empty()) return std::nullopt;
  const char* v = std::getenv(api_key_env.c_str());
  if (!v || !*v)
    throw std::runtime_error(
        fmt::format("provider {} takes its API key from the environment variable {}, which is not set", name,
                    api_key_env));
  return std::string(v);
}

const LlmProvider& find_llm_provider(const std::vector<LlmProvider>& providers, const std::string& name) {
  std::string known;
  for (const auto& p : providers) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw std::runtime_error(fmt::format("no LLM provider named '{}' in the settings (known: {})", name,
                                       known.empty() ? "none" : known));
}

void to_json(nlohmann::json& j, const LlmProvider& p) {
  j = {{"name", p.name},
       {"protocol", to_string(p.protocol)},
       {"base_url", p.base_url},
       {"model", p.model},
       {"max_tokens", p.max_tokens},
       {"temperature", p.temperature},
       {"usd_per_mtok_in", p.usd_per_mtok_in},
       {"usd_per_mtok_out", p.usd_per_mtok_out},
       {"api_key_env", p.api_key_env},
       {"connect_timeout_s", p.connect_timeout_s},
       {"idle_timeout_s", p.idle_timeout_s}};
}

namespace {
template <typename T>
void field(const nlohmann::json& j, const char* key, T& value) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  bool ok = std::is_same_v<T, std::string> ? it->is_string() : it->is_number();
  if (!ok)
    throw std::runtime_error(fmt::format("llm provider {} is {}: expected {}", key, it->dump(),
                                         std::is_same_v<T, std::string> ? "a string" : "a number"));
  value = it->template get<T>();
}
}  // namespace

void from_json(const nlohmann::json& j, LlmProvider& p) {
  if (!j.is_object())
    throw std::runtime_error(fmt::format("an llm provider is {}: expected an object", j.dump()));
  field(j, "name", p.name);
  std::string protocol = to_string(p.protocol);
  field(j, "protocol", protocol);
  p.protocol = llm_protocol_from_string(protocol);
  field(j, "base_url", p.base_url);
  field(j, "model", p.model);
  field(j, "max_tokens", p.max_tokens);
  field(j, "temperature", p.temperature);
  field(j, "usd_per_mtok_in", p.usd_per_mtok_in);
  field(j, "usd_per_mtok_out", p.usd_per_mtok_out);
  field(j, "api_key_env", p.api_key_env);
  field(j, "connect_timeout_s", p.connect_timeout_s);
  field(j, "idle_timeout_s", p.idle_timeout_s);
  if (p.name.empty()) throw std::runtime_error("an llm provider has no name");
  if (p.base_url.empty()) throw std::runtime_error(fmt::format("llm provider {} has no base_url", p.name));
}

}  // namespace nova
