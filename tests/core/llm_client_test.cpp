// The LLM client (core/llm/llm_client.h) against the scripted loopback server
// (tests/support/llm_server): both protocols streamed, and every fault the issue lists — 429 with
// Retry-After, 500, 529, a cut stream, garbage, a stall past the idle timeout, a refused key, a spend
// limit, no server at all, cancel mid-stream — each attempt recorded with its outcome. And the key:
// sent to the provider, never in a worker's environment.
#include "core/llm/llm_client.h"

#include <cstdlib>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "core/llm/llm_error.h"
#include "support/llm_server/scripted_llm_server.h"
#include "support/test_paths.h"

namespace nova {
namespace {
using nlohmann::json;
using namespace std::chrono_literals;

std::filesystem::path scratch() {
  return test::scratch_dir(std::string("llm_client_") +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

LlmRetryPolicy fast_retries(int attempts = 8) {
  LlmRetryPolicy r;
  r.max_attempts = attempts;
  r.base_delay = 20ms;
  r.max_delay = 200ms;
  return r;
}

LlmRequest hello() {
  LlmRequest r;
  r.system = "You write CUDA kernels.";
  r.messages.push_back({"user", "Write a kernel."});
  return r;
}

// The LlmError `call` throws (a failed expectation when it throws none).
LlmError error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const LlmError& e) {
    return e;
  }
  ADD_FAILURE() << "no LlmError";
  return LlmError(LlmErrorKind::bad_request, "none");
}

std::vector<std::string> outcomes(const std::vector<LlmAttempt>& attempts) {
  std::vector<std::string> out;
  for (const auto& a : attempts) out.push_back(a.outcome);
  return out;
}

TEST(LlmClient, OpenAiStreamArrivesPieceByPieceWithUsageAndCost) {
  test::ScriptedLlmServer server(
      {{"responses", json::array({{{"type", "openai"},
                                   {"text", "<think>let me see</think>__global__ void k() {}"},
                                   {"chunk", 5},
                                   {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 2000}}}}})}},
      scratch());
  LlmClient client(server.provider(LlmProtocol::openai_chat), "sk-test-secret", fast_retries());
  std::vector<std::string> deltas;
  LlmCompletion c =
      client.complete(hello(), CancelToken(), [&](const std::string& d) { deltas.push_back(d); });
  EXPECT_EQ(c.text, "__global__ void k() {}");
  EXPECT_EQ(c.reasoning, "let me see");
  EXPECT_GT(deltas.size(), 3u);  // streamed, not handed over at the end
  EXPECT_EQ(c.input_tokens, 100);
  EXPECT_EQ(c.output_tokens, 2000);
  EXPECT_FALSE(c.usage_estimated);
  EXPECT_DOUBLE_EQ(c.cost_usd, (100 * 3.0 + 2000 * 15.0) / 1e6);
  EXPECT_EQ(outcomes(c.attempts), std::vector<std::string>{"ok"});
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["path"], "/v1/chat/completions");
  EXPECT_EQ(requests[0]["headers"]["Authorization"], "Bearer sk-test-secret");
  EXPECT_EQ(requests[0]["body"]["model"], "scripted-model");
  EXPECT_EQ(requests[0]["body"]["stream"], true);
  EXPECT_EQ(requests[0]["body"]["messages"][0]["role"], "system");
  EXPECT_EQ(requests[0]["body"]["messages"][1]["content"], "Write a kernel.");
}

TEST(LlmClient, OpenAiWithoutUsageEstimatesAndSaysSo) {
  test::ScriptedLlmServer server(
      {{"responses",
        json::array({{{"type", "openai"}, {"text", std::string(400, 'x')}, {"usage", nullptr}}})}},
      scratch());
  LlmClient client(server.provider(LlmProtocol::openai_chat), "", fast_retries());
  LlmCompletion c = client.complete(hello(), CancelToken());
  EXPECT_TRUE(c.usage_estimated);
  EXPECT_EQ(c.output_tokens, 100);
  EXPECT_FALSE(server.requests()[0]["headers"].contains("Authorization"));  // no key configured, none sent
}

TEST(LlmClient, AnthropicStreamWithPingThinkingAndUnknownEvents) {
  test::ScriptedLlmServer server({{"responses", json::array({{{"type", "anthropic"},
                                                              {"text", "the answer"},
                                                              {"thinking", "ponder"},
                                                              {"ping", true},
                                                              {"unknown_events", true},
                                                              {"chunk", 3},
                                                              {"input_tokens", 50},
                                                              {"output_tokens", 70}}})}},
                                 scratch());
  LlmClient client(server.provider(LlmProtocol::anthropic_messages), "ak-secret", fast_retries());
  LlmCompletion c = client.complete(hello(), CancelToken());
  EXPECT_EQ(c.text, "the answer");
  EXPECT_EQ(c.reasoning, "ponder");
  EXPECT_EQ(c.input_tokens, 50);
  EXPECT_EQ(c.output_tokens, 70);
  auto r = server.requests().at(0);
  EXPECT_EQ(r["path"], "/v1/messages");
  EXPECT_EQ(r["headers"]["x-api-key"], "ak-secret");
  EXPECT_EQ(r["headers"]["anthropic-version"], "2023-06-01");
  EXPECT_EQ(r["body"]["system"], "You write CUDA kernels.");
  EXPECT_EQ(r["body"]["messages"].size(), 1u);
}

TEST(LlmClient, FaultsAreRetriedUntilAnAnswerAndEveryAttemptIsRecorded) {
  test::ScriptedLlmServer server(
      {{"responses",
        json::array(
            {{{"type", "status"},
              {"status", 429},
              {"headers", {{"Retry-After", "1"}}},
              {"body", R"({"error":{"message":"slow down"}})"}},
             {{"type", "status"}, {"status", 500}, {"body", "internal"}},
             {{"type", "status"},
              {"status", 529},
              {"body", R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"}},
             {{"type", "openai"}, {"text", "a long answer that never ends"}, {"chunk", 4}, {"cut_after", 4}},
             {{"type", "garbage"}, {"body", "<html>502 from a proxy</html>"}},
             {{"type", "openai"},
              {"text", "finally"},
              {"usage", {{"prompt_tokens", 1}, {"completion_tokens", 1}}}}})}},
      scratch());
  LlmClient client(server.provider(LlmProtocol::openai_chat), "", fast_retries());
  const auto started = std::chrono::steady_clock::now();
  LlmCompletion c = client.complete(hello(), CancelToken());
  EXPECT_EQ(c.text, "finally");
  EXPECT_EQ(outcomes(c.attempts), (std::vector<std::string>{"rate_limited", "server_error", "overloaded",
                                                            "cut", "not_json", "ok"}));
  EXPECT_EQ(c.attempts[0].http_status, 429);
  EXPECT_DOUBLE_EQ(c.attempts[0].waited_s, 1.0);  // Retry-After, not the 20 ms backoff
  EXPECT_GE(std::chrono::steady_clock::now() - started, 1s);
  EXPECT_LT(c.attempts[1].waited_s, 0.5);
  EXPECT_EQ(c.attempts[2].http_status, 529);
  EXPECT_NE(c.attempts[3].detail.find("end marker"), std::string::npos) << c.attempts[3].detail;
  EXPECT_EQ(server.requests().size(), 6u);
}

TEST(LlmClient, AnthropicOverloadedErrorEventMidStreamIsRetried) {
  test::ScriptedLlmServer server(
      {{"responses", json::array({{{"type", "anthropic"},
                                   {"text", "partial"},
                                   {"error", {{"type", "overloaded_error"}, {"message", "Overloaded"}}}},
                                  {{"type", "anthropic"}, {"text", "whole"}, {"output_tokens", 3}}})}},
      scratch());
  LlmClient client(server.provider(LlmProtocol::anthropic_messages), "", fast_retries());
  LlmCompletion c = client.complete(hello(), CancelToken());
  EXPECT_EQ(c.text, "whole");  // nothing of the failed attempt's text
  EXPECT_EQ(outcomes(c.attempts), (std::vector<std::string>{"overloaded", "ok"}));
}

TEST(LlmClient, ARefusedKeyAndASpendLimitAreNotRetriedAndSaySoPlainly) {
  test::ScriptedLlmServer server(
      {{"responses",
        json::array(
            {{{"type", "status"},
              {"status", 401},
              {"body", R"({"error":{"message":"Incorrect API key provided"}})"}},
             {{"type", "status"},
              {"status", 429},
              {"body",
               R"({"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}})"}}})}},
      scratch());
  LlmClient client(server.provider(LlmProtocol::openai_chat), "sk-wrong", fast_retries());
  {
    LlmError e = error_of([&] { client.complete(hello(), CancelToken()); });
    EXPECT_EQ(e.kind(), LlmErrorKind::auth);
    EXPECT_NE(std::string(e.what()).find("refused the API key"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Incorrect API key provided"), std::string::npos) << e.what();
    EXPECT_EQ(e.attempts().size(), 1u);
  }
  {
    LlmError e = error_of([&] { client.complete(hello(), CancelToken()); });
    EXPECT_EQ(e.kind(), LlmErrorKind::spend_limit);
    EXPECT_NE(std::string(e.what()).find("quota"), std::string::npos) << e.what();
    EXPECT_EQ(e.attempts().size(), 1u);
  }
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(LlmClient, AStallPastTheIdleTimeoutEndsTheAttemptAndTheNextOneAnswers) {
  test::ScriptedLlmServer server({{"responses", json::array({{{"type", "stall"}, {"seconds", 4}},
                                                             {{"type", "openai"}, {"text", "awake"}}})}},
                                 scratch());
  LlmProvider p = server.provider(LlmProtocol::openai_chat);
  p.idle_timeout_s = 1;
  LlmClient client(p, "", fast_retries());
  const auto started = std::chrono::steady_clock::now();
  LlmCompletion c = client.complete(hello(), CancelToken());
  EXPECT_EQ(c.text, "awake");
  EXPECT_EQ(outcomes(c.attempts), (std::vector<std::string>{"timeout", "ok"}));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3500ms);  // did not wait out the stall
}

TEST(LlmClient, RetriesEndAfterTheLimitWithEveryAttempt) {
  json responses = json::array();
  for (int i = 0; i < 3; ++i)
    responses.push_back({{"type", "status"}, {"status", 503}, {"body", "unavailable"}});
  test::ScriptedLlmServer server({{"responses", responses}}, scratch());
  LlmClient client(server.provider(LlmProtocol::openai_chat), "", fast_retries(3));
  {
    LlmError e = error_of([&] { client.complete(hello(), CancelToken()); });
    EXPECT_EQ(e.kind(), LlmErrorKind::server_error);
    EXPECT_EQ(outcomes(e.attempts()),
              (std::vector<std::string>{"server_error", "server_error", "server_error"}));
    EXPECT_NE(std::string(e.what()).find("gave up after 3 attempts"), std::string::npos) << e.what();
  }
}

TEST(LlmClient, NoServerIsAConnectErrorRetriedThenReported) {
  LlmProvider p;
  p.name = "nowhere";
  p.base_url = "http://127.0.0.1:9/v1";  // discard port: nothing listens
  p.model = "m";
  LlmClient client(p, "", fast_retries(2));
  {
    LlmError e = error_of([&] { client.complete(hello(), CancelToken()); });
    EXPECT_EQ(e.kind(), LlmErrorKind::connect);
    EXPECT_EQ(e.attempts().size(), 2u);
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:9"), std::string::npos) << e.what();
  }
}

TEST(LlmClient, CancelMidStreamEndsAtOnce) {
  test::ScriptedLlmServer server(
      {{"responses",
        json::array(
            {{{"type", "openai"}, {"text", std::string(200, 'y')}, {"chunk", 2}, {"delay_s", 0.1}}})}},
      scratch());
  LlmClient client(server.provider(LlmProtocol::openai_chat), "", fast_retries());
  CancelToken cancel;
  std::string got;
  const auto started = std::chrono::steady_clock::now();
  LlmError e = error_of([&] {
    client.complete(hello(), cancel, [&](const std::string& d) {
      got += d;
      if (got.size() >= 6) cancel.cancel();
    });
  });
  EXPECT_EQ(e.kind(), LlmErrorKind::cancelled);
  EXPECT_EQ(outcomes(e.attempts()), std::vector<std::string>{"cancelled"});
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);  // the whole answer takes 10 s
  EXPECT_LT(got.size(), 20u);
}

TEST(LlmClient, CancelWhileWaitingToRetryEndsTheWait) {
  test::ScriptedLlmServer server(
      {{"responses",
        json::array(
            {{{"type", "status"}, {"status", 429}, {"headers", {{"Retry-After", "30"}}}, {"body", "{}"}}})}},
      scratch());
  LlmClient client(server.provider(LlmProtocol::openai_chat), "", fast_retries());
  CancelToken cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(300ms);
    cancel.cancel();
  });
  const auto started = std::chrono::steady_clock::now();
  {
    LlmError e = error_of([&] { client.complete(hello(), cancel); });
    EXPECT_EQ(e.kind(), LlmErrorKind::cancelled);
    EXPECT_EQ(outcomes(e.attempts()), (std::vector<std::string>{"rate_limited", "cancelled"}));
  }
  canceller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

TEST(LlmClient, TheKeyComesFromItsVariableAndNeverReachesAWorkersEnvironment) {
  ::setenv("NOVA_TEST_LLM_KEY", "sk-never-in-a-worker", 1);
  LlmProvider p;
  p.name = "hosted";
  p.api_key_env = "NOVA_TEST_LLM_KEY";
  EXPECT_EQ(p.api_key(), "sk-never-in-a-worker");
  // A real child started the way workers are: its /proc/<pid>/environ has no key.
  ProcessResult r = ChildProcess::run({"cat", "/proc/self/environ"}, ChildProcess::minimal_env(), 10s);
  ASSERT_TRUE(r.status.exited && r.status.code == 0) << r.err;
  EXPECT_NE(r.out.find("PATH="), std::string::npos);
  EXPECT_EQ(r.out.find("sk-never-in-a-worker"), std::string::npos);
  EXPECT_EQ(r.out.find("NOVA_TEST_LLM_KEY"), std::string::npos);
  ::unsetenv("NOVA_TEST_LLM_KEY");
  try {
    p.api_key();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("NOVA_TEST_LLM_KEY"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nova
