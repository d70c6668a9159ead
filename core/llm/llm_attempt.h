#pragma once
// One attempt at one LLM request, as recorded: its HTTP status, its outcome ("ok" or an error kind),
// the sentence for the user, how long it took and how long the client waited before the next one.
#include <string>

#include <nlohmann/json.hpp>

namespace nova {

struct LlmAttempt {
  int number = 1;
  long http_status = 0;
  std::string outcome;  // "ok", or to_string(LlmErrorKind)
  std::string detail;
  double seconds = 0;
  double waited_s = 0;  // the backoff before the next attempt (0 for the last)
  bool operator==(const LlmAttempt&) const = default;
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LlmAttempt, number, http_status, outcome, detail, seconds,
                                                waited_s)

}  // namespace nova
