#include "core/llm/openai_stream_decoder.h"

#include "core/llm/llm_error.h"

namespace nova {

namespace {
std::string string_at(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
}  // namespace

void OpenAiStreamDecoder::on_event(const SseEvent& event) {
  if (!event.event.empty() && event.event != "message" && event.event != "error") return;  // unknown types
  if (event.data == "[DONE]") {
    result_.done = true;
    return;
  }
  const nlohmann::json j = nlohmann::json::parse(event.data, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw LlmError(LlmErrorKind::not_json,
                   "the stream sent an event that is not JSON: " + event.data.substr(0, 200));
  if (auto e = j.find("error"); e != j.end() && !e->is_null()) throw llm_error_from_event(*e);
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    if (u->contains("prompt_tokens") && (*u)["prompt_tokens"].is_number())
      result_.input_tokens = (*u)["prompt_tokens"].get<long long>();
    if (u->contains("completion_tokens") && (*u)["completion_tokens"].is_number())
      result_.output_tokens = (*u)["completion_tokens"].get<long long>();
  }
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) return;  // the usage chunk
  const auto& choice = (*choices)[0];
  if (auto d = choice.find("delta"); d != choice.end() && d->is_object()) {
    result_.reasoning += string_at(*d, "reasoning_content");
    result_.reasoning += string_at(*d, "reasoning");
    add_text(string_at(*d, "content"));
  }
  if (std::string finish = string_at(choice, "finish_reason"); !finish.empty()) result_.stop_reason = finish;
}

}  // namespace nova
