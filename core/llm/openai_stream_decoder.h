#pragma once
// The OpenAI Chat Completions stream (what vLLM, SGLang, llama.cpp's server, Ollama and hosted
// services send): "data: {chunk}" events ending with "data: [DONE]". Text from choices[0].delta.content;
// reasoning from delta.reasoning_content or delta.reasoning; usage from the last chunk when the server
// sends one (it may not); an {"error": ...} chunk ends the stream with that error.
#include "core/llm/llm_stream_decoder.h"

namespace nova {

class OpenAiStreamDecoder : public LlmStreamDecoder {
 public:
  void on_event(const SseEvent& event) override;
  // A finish reason without [DONE] is a complete answer too (some servers close there).
  bool complete() const override { return result_.done || !result_.stop_reason.empty(); }
};

}  // namespace nova
