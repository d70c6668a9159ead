#include "core/llm/anthropic_stream_decoder.h"

#include "core/llm/llm_error.h"

#include <algorithm>

namespace nova {

namespace {
void usage_into(const nlohmann::json& usage, LlmStreamResult& r) {
  if (!usage.is_object()) return;
  if (usage.contains("input_tokens") && usage["input_tokens"].is_number())
    r.input_tokens = usage["input_tokens"].get<long long>();
  if (usage.contains("output_tokens") && usage["output_tokens"].is_number())
    r.output_tokens = usage["output_tokens"].get<long long>();  // cumulative: replaces
}
}  // namespace

void AnthropicStreamDecoder::on_event(const SseEvent& event) {
  const std::string& type = event.event;
  if (type == "ping") return;
  static const char* const kKnown[] = {"message_start",
                                       "content_block_start",
                                       "content_block_delta",
                                       "content_block_stop",
                                       "message_delta",
                                       "message_stop",
                                       "error"};
  if (std::find(std::begin(kKnown), std::end(kKnown), type) == std::end(kKnown)) return;  // newer event types
  const nlohmann::json j = nlohmann::json::parse(event.data, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw LlmError(LlmErrorKind::not_json,
                   "the stream sent an event that is not JSON: " + event.data.substr(0, 200));
  if (type == "error") throw llm_error_from_event(j.contains("error") ? j["error"] : j);
  if (type == "message_start" && j.contains("message")) {
    usage_into(j["message"].value("usage", nlohmann::json()), result_);
  } else if (type == "content_block_start") {
    const auto block = j.value("content_block", nlohmann::json::object());
    if (block.value("type", "") == "text") add_text(block.value("text", ""));
  } else if (type == "content_block_delta") {
    const auto delta = j.value("delta", nlohmann::json::object());
    const std::string kind = delta.value("type", "");
    if (kind == "text_delta")
      add_text(delta.value("text", ""));
    else if (kind == "thinking_delta")
      result_.reasoning += delta.value("thinking", "");
  } else if (type == "message_delta") {
    const auto delta = j.value("delta", nlohmann::json::object());
    if (delta.contains("stop_reason") && delta["stop_reason"].is_string())
      result_.stop_reason = delta["stop_reason"];
    usage_into(j.value("usage", nlohmann::json()), result_);
  } else if (type == "message_stop") {
    result_.done = true;
  }
}

}  // namespace nova
