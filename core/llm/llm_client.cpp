#include "core/llm/llm_client.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "core/llm/anthropic_stream_decoder.h"
#include "core/llm/http_client.h"
#include "core/llm/llm_error.h"
#include "core/llm/openai_stream_decoder.h"
#include "core/llm/think_blocks.h"

namespace nova {
namespace {
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Sleeps `delay` in small slices; false when cancelled meanwhile.
bool cancellable_sleep(std::chrono::milliseconds delay, const CancelToken& cancel) {
  const auto until = Clock::now() + delay;
  while (Clock::now() < until) {
    if (cancel.cancelled()) return false;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(std::chrono::milliseconds(20), until - Clock::now()));
  }
  return !cancel.cancelled();
}

}  // namespace

LlmClient::LlmClient(LlmProvider provider, std::string api_key, LlmRetryPolicy retry)
    : provider_(std::move(provider)), api_key_(std::move(api_key)), retry_(retry) {}

std::string LlmClient::body(const LlmRequest& request) const {
  nlohmann::json messages = nlohmann::json::array();
  const bool anthropic = provider_.protocol == LlmProtocol::anthropic_messages;
  if (!anthropic && !request.system.empty())
    messages.push_back({{"role", "system"}, {"content", request.system}});
  for (const auto& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  nlohmann::json j = {{"model", provider_.model},
                      {"messages", messages},
                      {"max_tokens", provider_.max_tokens},
                      {"temperature", provider_.temperature},
                      {"stream", true}};
  if (anthropic) {
    if (!request.system.empty()) j["system"] = request.system;
  } else {
    j["stream_options"] = {{"include_usage", true}};
  }
  return j.dump();
}

std::vector<std::string> LlmClient::headers() const {
  std::vector<std::string> h{"Content-Type: application/json", "Accept: text/event-stream"};
  if (provider_.protocol == LlmProtocol::anthropic_messages) {
    h.push_back("anthropic-version: 2023-06-01");
    if (!api_key_.empty()) h.push_back("x-api-key: " + api_key_);
  } else if (!api_key_.empty()) {
    h.push_back("Authorization: Bearer " + api_key_);
  }
  return h;
}

std::chrono::milliseconds LlmClient::backoff(int attempt, std::optional<double> retry_after) {
  if (retry_after) return std::chrono::milliseconds(static_cast<long long>(std::ceil(*retry_after * 1000)));
  const double exp = retry_.base_delay.count() * std::pow(2.0, attempt - 1);
  const double capped = std::min(exp, static_cast<double>(retry_.max_delay.count()));
  std::uniform_real_distribution<double> u(-retry_.jitter, retry_.jitter);
  return std::chrono::milliseconds(static_cast<long long>(capped * (1 + u(random_))));
}

LlmCompletion LlmClient::attempt(const LlmRequest& request, const CancelToken& cancel, const OnText& on_text,
                                 LlmAttempt& record, std::optional<double>& retry_after) {
  std::unique_ptr<LlmStreamDecoder> decoder;
  if (provider_.protocol == LlmProtocol::anthropic_messages)
    decoder = std::make_unique<AnthropicStreamDecoder>();
  else
    decoder = std::make_unique<OpenAiStreamDecoder>();
  decoder->set_on_text(on_text);
  SseParser sse;
  HttpRequest http;
  http.url = provider_.endpoint();
  http.headers = headers();
  http.body = body(request);
  http.connect_timeout = std::chrono::seconds(provider_.connect_timeout_s);
  http.idle_timeout = std::chrono::seconds(provider_.idle_timeout_s);
  HttpResponse response = HttpClient::post(
      http,
      [&](std::string_view piece) {
        for (const auto& e : sse.feed(piece)) decoder->on_event(e);
      },
      cancel);
  record.http_status = response.status;
  retry_after = response.retry_after_s();
  using F = HttpResponse::Failure;
  switch (response.failure) {
    case F::cancelled:
      throw LlmError(LlmErrorKind::cancelled, "cancelled");
    case F::idle_timeout:
      throw LlmError(LlmErrorKind::timeout,
                     "the provider sent nothing for " + std::to_string(provider_.idle_timeout_s) + " s");
    case F::connect:
      throw LlmError(LlmErrorKind::connect,
                     fmt::format("cannot connect to {}: {}", http.url, response.error));
    case F::transport:
      if (response.status >= 200 && response.status < 300)
        throw LlmError(LlmErrorKind::cut, "the stream was cut: " + response.error);
      throw LlmError(LlmErrorKind::connect, fmt::format("{}: {}", http.url, response.error));
    case F::none:
      break;
  }
  if (response.status < 200 || response.status >= 300)
    throw llm_error_from_http(response.status, response.error_body);
  for (const auto& e : sse.finish()) decoder->on_event(e);
  const LlmStreamResult& r = decoder->result();
  if (!decoder->complete()) {
    if (r.text.empty() && r.reasoning.empty() && !r.input_tokens)
      throw LlmError(LlmErrorKind::not_json, "the answer was not an event stream of the protocol's JSON");
    throw LlmError(LlmErrorKind::cut,
                   fmt::format("the stream ended before its end marker, after {} characters", r.text.size()));
  }
  LlmCompletion c;
  ThinkBlocks::Split split = ThinkBlocks::split(r.text);
  c.text = split.answer;
  c.reasoning = r.reasoning + (r.reasoning.empty() || split.reasoning.empty() ? "" : "\n") + split.reasoning;
  c.stop_reason = r.stop_reason;
  c.usage_estimated = !r.input_tokens || !r.output_tokens;
  std::size_t prompt_chars = request.system.size();
  for (const auto& m : request.messages) prompt_chars += m.content.size();
  c.input_tokens = r.input_tokens.value_or(static_cast<long long>(prompt_chars / 4));
  c.output_tokens =
      r.output_tokens.value_or(static_cast<long long>((r.text.size() + r.reasoning.size()) / 4));
  c.cost_usd = provider_.cost_usd(c.input_tokens, c.output_tokens);
  return c;
}

LlmCompletion LlmClient::complete(const LlmRequest& request, const CancelToken& cancel,
                                  const OnText& on_text) {
  std::vector<LlmAttempt> attempts;
  for (int n = 1;; ++n) {
    LlmAttempt record;
    record.number = n;
    const auto started = Clock::now();
    std::optional<double> retry_after;
    try {
      if (cancel.cancelled()) throw LlmError(LlmErrorKind::cancelled, "cancelled");
      LlmCompletion c = attempt(request, cancel, on_text, record, retry_after);
      record.outcome = "ok";
      record.seconds = seconds_since(started);
      attempts.push_back(record);
      c.attempts = std::move(attempts);
      return c;
    } catch (const LlmError& e) {
      record.outcome = to_string(e.kind());
      record.detail = e.what();
      record.seconds = seconds_since(started);
      const bool again = retryable(e.kind()) && n < retry_.max_attempts;
      const auto wait = again ? backoff(n, retry_after) : std::chrono::milliseconds(0);
      if (again && wait > retry_.max_retry_after) {
        attempts.push_back(record);
        throw LlmError(e.kind(),
                       fmt::format("{}; the provider asks to wait {:.0f} s, longer than the {} s allowed",
                                   e.what(), wait.count() / 1000.0, retry_.max_retry_after.count() / 1000),
                       attempts);
      }
      record.waited_s = wait.count() / 1000.0;
      attempts.push_back(record);
      if (!again) {
        std::string message = e.what();
        if (retryable(e.kind())) message = fmt::format("{} (gave up after {} attempts)", message, n);
        throw LlmError(e.kind(), message, attempts);
      }
      if (!cancellable_sleep(wait, cancel)) {
        attempts.back().waited_s = 0;
        LlmAttempt stop;
        stop.number = n + 1;
        stop.outcome = "cancelled";
        stop.detail = "cancelled while waiting to retry";
        attempts.push_back(stop);
        throw LlmError(LlmErrorKind::cancelled, "cancelled", attempts);
      }
    }
  }
}

}  // namespace nova
