#pragma once
// A streaming client for one LLM provider (OpenAI Chat Completions or Anthropic Messages): sends a
// conversation, hands the text to `on_text` as it arrives, and returns the whole answer with its
// token counts, cost and every attempt it took. 429, 5xx, 529, timeouts, cut streams and bodies that
// are not JSON are retried with exponential backoff and jitter, honouring Retry-After; a refused key,
// a spend limit and other 4xx are not retried. Cancel ends it at any moment (LlmError cancelled).
#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/jobs/cancel_token.h"
#include "core/llm/llm_attempt.h"
#include "core/llm/llm_provider.h"

namespace nova {

struct LlmMessage {
  std::string role;  // "user" or "assistant"
  std::string content;
};

struct LlmRequest {
  std::string system;
  std::vector<LlmMessage> messages;
};

struct LlmCompletion {
  std::string text;       // the answer, <think> blocks taken out
  std::string reasoning;  // reasoning fields, thinking blocks and <think> blocks
  std::string stop_reason;
  long long input_tokens = 0, output_tokens = 0;
  bool usage_estimated = false;  // the server sent no usage: counts estimated at 4 characters a token
  double cost_usd = 0;
  std::vector<LlmAttempt> attempts;
};

struct LlmRetryPolicy {
  int max_attempts = 6;
  std::chrono::milliseconds base_delay{1000};
  std::chrono::milliseconds max_delay{60000};
  double jitter = 0.25;                               // each delay scaled by 1 +- jitter
  std::chrono::milliseconds max_retry_after{300000};  // a longer Retry-After ends the request
};

class LlmClient {
 public:
  using OnText = std::function<void(const std::string& delta)>;
  // `api_key` empty: no key is sent (a local server).
  LlmClient(LlmProvider provider, std::string api_key, LlmRetryPolicy retry = {});
  // Throws LlmError (with the attempts) when no attempt succeeded.
  LlmCompletion complete(const LlmRequest& request, const CancelToken& cancel, const OnText& on_text = {});
  const LlmProvider& provider() const { return provider_; }

 private:
  LlmCompletion attempt(const LlmRequest& request, const CancelToken& cancel, const OnText& on_text,
                        LlmAttempt& record, std::optional<double>& retry_after);
  std::string body(const LlmRequest& request) const;
  std::vector<std::string> headers() const;
  std::chrono::milliseconds backoff(int attempt, std::optional<double> retry_after);

  LlmProvider provider_;
  std::string api_key_;
  LlmRetryPolicy retry_;
  std::mt19937 random_{std::random_device{}()};
};

}  // namespace nova
