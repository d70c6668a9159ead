#pragma once
// The Anthropic Messages stream: message_start (input tokens), content_block_start/delta/stop (text
// and thinking blocks), message_delta (stop reason; its usage is cumulative, so it replaces, never
// adds), message_stop (the end), ping, error, and event types added later (ignored).
#include "core/llm/llm_stream_decoder.h"

namespace nova {

class AnthropicStreamDecoder : public LlmStreamDecoder {
 public:
  void on_event(const SseEvent& event) override;
};

}  // namespace nova
