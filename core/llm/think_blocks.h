#pragma once
// Models served through OpenAI-compatible servers often write their reasoning inline as
// <think>...</think>. ThinkBlocks separates it from the answer: the blocks' text is reasoning, the
// rest is the answer; an unclosed <think> runs to the end (reasoning only).
#include <string>

namespace nova {

class ThinkBlocks {
 public:
  struct Split {
    std::string answer, reasoning;
  };
  static Split split(const std::string& text);
};

}  // namespace nova
