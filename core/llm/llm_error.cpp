#include "core/llm/llm_error.h"

#include <cctype>

namespace nova {

std::string to_string(LlmErrorKind kind) {
  switch (kind) {
    case LlmErrorKind::rate_limited:
      return "rate_limited";
    case LlmErrorKind::server_error:
      return "server_error";
    case LlmErrorKind::overloaded:
      return "overloaded";
    case LlmErrorKind::timeout:
      return "timeout";
    case LlmErrorKind::connect:
      return "connect";
    case LlmErrorKind::cut:
      return "cut";
    case LlmErrorKind::not_json:
      return "not_json";
    case LlmErrorKind::auth:
      return "auth";
    case LlmErrorKind::spend_limit:
      return "spend_limit";
    case LlmErrorKind::bad_request:
      return "bad_request";
    case LlmErrorKind::cancelled:
      return "cancelled";
  }
  return "unknown";
}

bool retryable(LlmErrorKind kind) {
  switch (kind) {
    case LlmErrorKind::auth:
    case LlmErrorKind::spend_limit:
    case LlmErrorKind::bad_request:
    case LlmErrorKind::cancelled:
      return false;
    default:
      return true;
  }
}

}  // namespace nova

#include <fmt/format.h>

namespace nova {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool spend_limit_words(const std::string& text) {
  const std::string l = lower(text);
  for (const char* w : {"insufficient_quota", "credit balance", "spend limit", "billing", "quota exceeded"})
    if (l.find(w) != std::string::npos) return true;
  return false;
}

// The provider's message: error.message (OpenAI, Anthropic), error (a string), message, or the body.
std::string message_of(const nlohmann::json& j, const std::string& body) {
  if (j.is_object()) {
    if (auto e = j.find("error"); e != j.end()) {
      if (e->is_string()) return e->get<std::string>();
      if (e->is_object() && e->contains("message") && (*e)["message"].is_string())
        return (*e)["message"].get<std::string>();
    }
    if (auto m = j.find("message"); m != j.end() && m->is_string()) return m->get<std::string>();
  }
  std::string b = body.substr(0, 300);
  return b.empty() ? "(no body)" : b;
}

}  // namespace

LlmError llm_error_from_http(long status, const std::string& body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  const std::string message = message_of(j, body);
  const std::string what = fmt::format("HTTP {}: {}", status, message);
  if (status == 402 || spend_limit_words(body))
    return LlmError(LlmErrorKind::spend_limit,
                    "the provider's spend limit or quota is reached (" + what + ")");
  if (status == 401 || status == 403)
    return LlmError(LlmErrorKind::auth, "the provider refused the API key (" + what + ")");
  if (status == 429) return LlmError(LlmErrorKind::rate_limited, "rate limited (" + what + ")");
  if (status == 529) return LlmError(LlmErrorKind::overloaded, "the provider is overloaded (" + what + ")");
  if (status >= 500) return LlmError(LlmErrorKind::server_error, "server error (" + what + ")");
  return LlmError(LlmErrorKind::bad_request, "the provider rejected the request (" + what + ")");
}

LlmError llm_error_from_event(const nlohmann::json& error) {
  const std::string type = error.is_object() ? error.value("type", std::string()) : std::string();
  const std::string message = message_of(nlohmann::json{{"error", error}}, error.dump());
  const std::string what = fmt::format("error in the stream: {}{}", type.empty() ? "" : type + ": ", message);
  if (spend_limit_words(error.dump())) return LlmError(LlmErrorKind::spend_limit, what);
  if (type == "overloaded_error") return LlmError(LlmErrorKind::overloaded, what);
  if (type == "rate_limit_error") return LlmError(LlmErrorKind::rate_limited, what);
  if (type == "authentication_error" || type == "permission_error") return LlmError(LlmErrorKind::auth, what);
  if (type == "invalid_request_error") return LlmError(LlmErrorKind::bad_request, what);
  return LlmError(LlmErrorKind::server_error, what);
}

}  // namespace nova
