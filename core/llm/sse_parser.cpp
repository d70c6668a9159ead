#include "core/llm/sse_parser.h"

namespace nova {

std::vector<SseEvent> SseParser::feed(std::string_view bytes) {
  std::vector<SseEvent> out;
  for (char c : bytes) {
    if (c == '\n' && last_was_cr_) {  // the LF of a CRLF: the line already ended at the CR
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      line(line_, out);
      line_.clear();
    } else {
      line_ += c;
    }
  }
  return out;
}

std::vector<SseEvent> SseParser::finish() {
  std::vector<SseEvent> out;
  if (!line_.empty()) line(line_, out);
  line_.clear();
  line("", out);  // dispatches what was gathered
  return out;
}

void SseParser::line(std::string_view text, std::vector<SseEvent>& out) {
  if (text.empty()) {
    if (has_data_) out.push_back({event_, data_});
    event_.clear();
    data_.clear();
    has_data_ = false;
    return;
  }
  if (text.front() == ':') return;  // a comment
  std::string_view field = text, value;
  if (auto colon = text.find(':'); colon != std::string_view::npos) {
    field = text.substr(0, colon);
    value = text.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "event") {
    event_ = value;
  } else if (field == "data") {
    if (has_data_) data_ += '\n';
    data_ += value;
    has_data_ = true;
  }
  // "id" and "retry" do not matter to a single POST; unknown fields are ignored by the rules.
}

}  // namespace nova
