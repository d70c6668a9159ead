#pragma once
// Turns one protocol's server-sent events into the answer as it grows: text, reasoning (kept apart),
// stop reason, token counts, whether the end marker came. OpenAiStreamDecoder and
// AnthropicStreamDecoder implement it; the client feeds every event and asks done() at the end of the
// body (no end marker: a cut stream). An event that is not the protocol's JSON throws
// LlmError(not_json); an error event throws the error's kind.
#include <functional>
#include <optional>
#include <string>

#include "core/llm/sse_parser.h"

namespace nova {

struct LlmStreamResult {
  std::string text, reasoning, stop_reason;
  std::optional<long long> input_tokens, output_tokens;  // unset: the server sent no usage
  bool done = false;                                     // the end marker arrived
};

class LlmStreamDecoder {
 public:
  using OnText = std::function<void(const std::string& delta)>;
  virtual ~LlmStreamDecoder() = default;
  virtual void on_event(const SseEvent& event) = 0;
  // Whether the stream may end here: its end marker came (or, OpenAI, a finish reason).
  virtual bool complete() const { return result_.done; }
  const LlmStreamResult& result() const { return result_; }
  void set_on_text(OnText on_text) { on_text_ = std::move(on_text); }

 protected:
  void add_text(const std::string& delta) {
    result_.text += delta;
    if (on_text_ && !delta.empty()) on_text_(delta);
  }
  LlmStreamResult result_;
  OnText on_text_;
};

}  // namespace nova
