#pragma once
// What went wrong with a request to an LLM provider, as a kind the client decides on (retry or not)
// and a plain sentence for the user ("the provider refused the API key in OPENAI_API_KEY (HTTP 401):
// ..."). Thrown by LlmClient with every attempt made so far.
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/llm/llm_attempt.h"

namespace nova {

enum class LlmErrorKind {
  rate_limited,  // 429
  server_error,  // 5xx
  overloaded,    // Anthropic 529 or an overloaded_error event
  timeout,       // connect or idle timeout
  connect,       // no connection
  cut,           // the stream ended before its end marker
  not_json,      // a body or an event that is not the JSON the protocol promises
  auth,          // 401, 403: not retried
  spend_limit,   // 402, insufficient_quota, credit balance: not retried
  bad_request,   // other 4xx: not retried
  cancelled,
};

std::string to_string(LlmErrorKind kind);
bool retryable(LlmErrorKind kind);

class LlmError : public std::runtime_error {
 public:
  LlmError(LlmErrorKind kind, const std::string& message, std::vector<LlmAttempt> attempts = {})
      : std::runtime_error(message), kind_(kind), attempts_(std::move(attempts)) {}
  LlmErrorKind kind() const { return kind_; }
  const std::vector<LlmAttempt>& attempts() const { return attempts_; }

 private:
  LlmErrorKind kind_;
  std::vector<LlmAttempt> attempts_;
};

}  // namespace nova

namespace nova {
// The error for an HTTP answer that is not 2xx, from its status and body (the provider's own message
// when the body is JSON with error.message; the spend-limit wordings of OpenAI and Anthropic).
LlmError llm_error_from_http(long status, const std::string& body);
// The error for an error object inside a 200 stream ({"type": "overloaded_error", "message": ...}).
LlmError llm_error_from_event(const nlohmann::json& error);
}  // namespace nova
