#include "core/llm/http_client.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <curl/curl.h>

namespace nova {
namespace {
using Clock = std::chrono::steady_clock;
constexpr std::size_t kErrorBodyLimit = 64 * 1024;

struct Transfer {
  const HttpClient::OnBody* on_body = nullptr;
  HttpResponse* response = nullptr;
  CURL* easy = nullptr;
  Clock::time_point last_byte = Clock::now();
  std::exception_ptr failure;
};

long status_of(CURL* easy) {
  long status = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

std::size_t on_write(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t bytes = size * n;
  t->last_byte = Clock::now();
  const long status = status_of(t->easy);
  if (status >= 200 && status < 300) {
    try {
      (*t->on_body)(std::string_view(data, bytes));
    } catch (...) {
      t->failure = std::current_exception();
      return 0;  // ends the transfer
    }
  } else {
    auto& body = t->response->error_body;
    body.append(data, std::min(bytes, kErrorBodyLimit - std::min(kErrorBodyLimit, body.size())));
  }
  return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t bytes = size * n;
  t->last_byte = Clock::now();
  std::string line(data, bytes);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.rfind("HTTP/", 0) == 0) {
    t->response->headers.clear();  // a new answer (after a 100 Continue or a redirect)
  } else if (auto colon = line.find(':'); colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    t->response->headers[name] = value;
  }
  return bytes;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

std::optional<double> HttpResponse::retry_after_s() const {
  auto it = headers.find("retry-after");
  if (it == headers.end() || it->second.empty()) return std::nullopt;
  const std::string& v = it->second;
  if (std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c) || c == '.'; })) {
    try {
      return std::stod(v);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  const time_t at = curl_getdate(v.c_str(), nullptr);
  if (at < 0) return std::nullopt;
  return std::max(0.0, std::difftime(at, std::time(nullptr)));
}

HttpResponse HttpClient::post(const HttpRequest& request, const OnBody& on_body, const CancelToken& cancel) {
  global_init();
  HttpResponse response;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> easy(curl_easy_init(), &curl_easy_cleanup);
  std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> multi(curl_multi_init(), &curl_multi_cleanup);
  if (!easy || !multi) throw std::runtime_error("libcurl could not start a transfer");
  curl_slist* headers = nullptr;
  for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(headers, &curl_slist_free_all);

  Transfer t;
  t.on_body = &on_body;
  t.response = &response;
  t.easy = easy.get();
  CURL* e = easy.get();
  curl_easy_setopt(e, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(e, CURLOPT_POST, 1L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, header_list.get());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");  // identity or whatever libcurl can decode
  curl_multi_add_handle(multi.get(), e);

  int running = 1;
  while (running) {
    if (curl_multi_perform(multi.get(), &running) != CURLM_OK) break;
    if (!running) break;
    curl_multi_poll(multi.get(), nullptr, 0, 50, nullptr);
    if (cancel.cancelled()) {
      response.failure = HttpResponse::Failure::cancelled;
      response.error = "cancelled";
      break;
    }
    if (Clock::now() - t.last_byte > request.idle_timeout) {
      response.failure = HttpResponse::Failure::idle_timeout;
      response.error = "no data for " + std::to_string(request.idle_timeout.count()) + " ms";
      break;
    }
  }
  CURLcode code = CURLE_OK;
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi.get(), &left))
    if (msg->msg == CURLMSG_DONE) code = msg->data.result;
  curl_multi_remove_handle(multi.get(), e);
  if (t.failure) std::rethrow_exception(t.failure);
  response.status = status_of(e);
  if (response.failure == HttpResponse::Failure::none && code != CURLE_OK) {
    response.failure = (code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST ||
                        (code == CURLE_OPERATION_TIMEDOUT && response.status == 0))
                           ? HttpResponse::Failure::connect
                           : HttpResponse::Failure::transport;
    response.error = curl_easy_strerror(code);
  }
  return response;
}

}  // namespace nova
