#pragma once
// Turns an LLM's answer into a fast-path candidate (core/gen/candidate.h): the last ```cuda block is
// the device code, the last ```json block the launch plan's temps and steps; the group's inputs and
// outputs come from the request, never from the answer. An answer without that pair whose last
// ```python block calls load_inline is in KernelBench's ModelNew form: the parser hands that block on
// (model_new_source) for KernelBenchForm, which reads it with the worker's Python into a full-path
// candidate. An answer that fits neither form gives no candidate and a sentence saying what is missing
// or wrong, which goes back to the model.
#include <optional>
#include <string>

#include "core/gen/candidate.h"

namespace nova {

struct ParsedAnswer {
  std::optional<Candidate> candidate;
  std::string problem;           // why there is no candidate
  std::string model_new_source;  // KernelBench's form: the answer's ```python block
};

class LlmAnswerParser {
 public:
  // `base`: the group's candidate skeleton (group, model, plan inputs and outputs, origin).
  static ParsedAnswer parse(const std::string& answer, const Candidate& base);
  // A hash of what gets compiled and run (the code without comments and blank space, and the plan; on
  // the full path, the extension), so that the same kernel answered twice is evaluated once.
  static std::string code_hash(const Candidate& candidate);
};

}  // namespace nova
