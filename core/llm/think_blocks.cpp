#include "core/llm/think_blocks.h"

namespace nova {

ThinkBlocks::Split ThinkBlocks::split(const std::string& text) {
  static const std::string kOpen = "<think>", kClose = "</think>";
  Split out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t open = text.find(kOpen, at);
    if (open == std::string::npos) {
      out.answer += text.substr(at);
      break;
    }
    out.answer += text.substr(at, open - at);
    const std::size_t close = text.find(kClose, open + kOpen.size());
    const std::size_t end = close == std::string::npos ? text.size() : close;
    if (!out.reasoning.empty()) out.reasoning += '\n';
    out.reasoning += text.substr(open + kOpen.size(), end - open - kOpen.size());
    at = close == std::string::npos ? text.size() : close + kClose.size();
  }
  return out;
}

}  // namespace nova
