#pragma once
// Server-sent events, parsed incrementally: bytes arrive in arbitrary pieces (half a line, several
// events at once) and complete events come out as soon as their blank line has arrived. Follows the
// WHATWG event-stream rules: LF, CRLF or CR line ends; "field: value" with one optional space;
// comment lines (":" first, servers' keep-alives) ignored; several data lines joined with "\n".
#include <string>
#include <string_view>
#include <vector>

namespace nova {

struct SseEvent {
  std::string event;  // empty when the server named none ("message")
  std::string data;
  bool operator==(const SseEvent&) const = default;
};

class SseParser {
 public:
  // The events completed by `bytes`.
  std::vector<SseEvent> feed(std::string_view bytes);
  // At the end of the stream: an event whose blank line never came (a cut stream), if any.
  std::vector<SseEvent> finish();
  // Bytes received and not yet part of a complete event.
  bool pending() const { return !line_.empty() || has_data_ || !event_.empty(); }

 private:
  void line(std::string_view text, std::vector<SseEvent>& out);
  std::string line_;
  bool last_was_cr_ = false;
  std::string event_, data_;
  bool has_data_ = false;
};

}  // namespace nova
