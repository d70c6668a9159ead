#pragma once
// HTTP POST through libcurl for the LLM client: the body of a successful answer is handed over piece
// by piece as it arrives (streaming), an error answer's body is kept whole (bounded) for its message,
// and the transfer ends early on cancel, on a connect timeout, or when no byte arrived for the idle
// timeout. Reports what happened as data; throws only for a request that cannot be set up.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/jobs/cancel_token.h"

namespace nova {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds idle_timeout{120000};
};

struct HttpResponse {
  enum class Failure { none, connect, idle_timeout, cancelled, transport };
  long status = 0;                             // 0: no answer
  std::map<std::string, std::string> headers;  // names in lower case
  std::string error_body;                      // a non-2xx answer's body (first 64 KiB)
  Failure failure = Failure::none;
  std::string error;  // libcurl's words, for a failure
  // Retry-After in seconds (its delay-seconds or HTTP-date form), when the answer had one.
  std::optional<double> retry_after_s() const;
};

class HttpClient {
 public:
  using OnBody = std::function<void(std::string_view piece)>;
  // `on_body` gets the pieces of a 2xx answer's body. An exception from it ends the transfer and
  // propagates.
  static HttpResponse post(const HttpRequest& request, const OnBody& on_body, const CancelToken& cancel);
};

}  // namespace nova
