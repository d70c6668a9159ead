// The event-stream parser (core/llm/sse_parser.h) and the two protocol decoders on hand-written
// streams: events split across arbitrary pieces, CRLF, comments, multi-line data, a missing usage
// chunk, reasoning fields, <think> blocks, ping and unknown events, cumulative Anthropic usage.
#include "core/llm/sse_parser.h"

#include <optional>

#include <gtest/gtest.h>

#include "core/llm/anthropic_stream_decoder.h"
#include "core/llm/llm_error.h"
#include "core/llm/openai_stream_decoder.h"
#include "core/llm/think_blocks.h"

namespace nova {
namespace {

TEST(LlmSseParser, EventsSplitAnywhereComeOutWhole) {
  const std::string stream =
      ": keep-alive\r\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\ndata: first\ndata: second\n\n";
  std::vector<SseEvent> whole = SseParser().feed(stream);
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(whole[0], (SseEvent{"message_start", "{\"a\":1}"}));
  EXPECT_EQ(whole[1], (SseEvent{"", "first\nsecond"}));
  // Byte by byte: the same events, each as soon as its blank line arrived.
  SseParser p;
  std::vector<SseEvent> bytewise;
  for (char c : stream)
    for (auto& e : p.feed(std::string(1, c))) bytewise.push_back(e);
  EXPECT_EQ(bytewise, whole);
  EXPECT_FALSE(p.pending());
}

TEST(LlmSseParser, AnEventWithoutItsBlankLineComesOutOnlyAtTheEnd) {
  SseParser p;
  EXPECT_TRUE(p.feed("data: {\"x\":").empty());
  EXPECT_TRUE(p.pending());
  auto rest = p.finish();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].data, "{\"x\":");
}

void feed(LlmStreamDecoder& d, const std::string& stream) {
  SseParser p;
  for (auto& e : p.feed(stream)) d.on_event(e);
}

TEST(LlmStreamDecoders, OpenAiTextReasoningUsageAndUnknownEvents) {
  OpenAiStreamDecoder d;
  std::string streamed;
  d.set_on_text([&](const std::string& t) { streamed += t; });
  feed(d,
       "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm \"}}]}\n\n"
       "data: {\"choices\":[{\"delta\":{\"reasoning\":\"ok\"}}]}\n\n"
       "event: vendor.extra\ndata: not json at all\n\n"
       "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"
       "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n"
       "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}\n\n");
  EXPECT_FALSE(d.result().done);
  EXPECT_TRUE(d.complete());  // a finish reason: complete even before [DONE]
  feed(d, "data: [DONE]\n\n");
  EXPECT_TRUE(d.result().done);
  EXPECT_EQ(d.result().text, "Hello");
  EXPECT_EQ(streamed, "Hello");
  EXPECT_EQ(d.result().reasoning, "hmm ok");
  EXPECT_EQ(d.result().input_tokens, 12);
  EXPECT_EQ(d.result().output_tokens, 3);
}

TEST(LlmStreamDecoders, OpenAiWithoutUsageLeavesTheCountsUnset) {
  OpenAiStreamDecoder d;
  feed(
      d,
      "data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
  EXPECT_FALSE(d.result().input_tokens);
  EXPECT_FALSE(d.result().output_tokens);
}

// The kind of the LlmError that feeding `stream` throws.
std::optional<LlmErrorKind> error_kind(LlmStreamDecoder& d, const std::string& stream,
                                       std::string* what = nullptr) {
  try {
    feed(d, stream);
  } catch (const LlmError& e) {
    if (what) *what = e.what();
    return e.kind();
  }
  return std::nullopt;
}

TEST(LlmStreamDecoders, OpenAiGarbageAndErrorChunksThrowTheirKinds) {
  OpenAiStreamDecoder d;
  EXPECT_EQ(error_kind(d, "data: <html>\n\n"), LlmErrorKind::not_json);
  OpenAiStreamDecoder d2;
  std::string what;
  EXPECT_EQ(error_kind(d2, "data: {\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}\n\n",
                       &what),
            LlmErrorKind::rate_limited);
  EXPECT_NE(what.find("slow down"), std::string::npos);
}

TEST(LlmStreamDecoders, AnthropicUsageIsCumulativeAndPingThinkingAndUnknownEventsAreTolerated) {
  AnthropicStreamDecoder d;
  feed(
      d,
      "event: message_start\ndata: "
      "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":40,\"output_tokens\":1}}}\n\n"
      "event: content_block_start\ndata: "
      "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":"
      "\"\"}}\n\n"
      "event: content_block_delta\ndata: "
      "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":"
      "\"plan\"}}\n\n"
      "event: ping\ndata: {\"type\":\"ping\"}\n\n"
      "event: content_block_delta\ndata: "
      "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"ab\"}}\n\n"
      "event: future_event\ndata: {\"type\":\"future_event\"}\n\n"
      "event: message_delta\ndata: "
      "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":20}}"
      "\n\n"
      "event: message_delta\ndata: "
      "{\"type\":\"message_delta\",\"delta\":{},\"usage\":{\"output_tokens\":25}}\n\n");
  EXPECT_FALSE(d.complete());  // no message_stop yet: a cut stream would end here
  feed(d, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  EXPECT_TRUE(d.complete());
  EXPECT_EQ(d.result().text, "ab");
  EXPECT_EQ(d.result().reasoning, "plan");
  EXPECT_EQ(d.result().input_tokens, 40);
  EXPECT_EQ(d.result().output_tokens, 25);  // the last cumulative count, not 1 + 20 + 25
  EXPECT_EQ(d.result().stop_reason, "end_turn");
}

TEST(LlmStreamDecoders, AnthropicErrorEventIsOverloaded) {
  AnthropicStreamDecoder d;
  EXPECT_EQ(
      error_kind(
          d,
          "event: error\ndata: "
          "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"),
      LlmErrorKind::overloaded);
}

TEST(LlmThinkBlocks, ReasoningIsTakenOutOfTheAnswer) {
  auto s = ThinkBlocks::split("<think>first</think>answer <think>again</think>end");
  EXPECT_EQ(s.answer, "answer end");
  EXPECT_EQ(s.reasoning, "first\nagain");
  auto open = ThinkBlocks::split("text<think>never closed");
  EXPECT_EQ(open.answer, "text");
  EXPECT_EQ(open.reasoning, "never closed");
  EXPECT_EQ(ThinkBlocks::split("plain").answer, "plain");
}

TEST(LlmErrors, HttpStatusesAndBodiesMapToKinds) {
  EXPECT_EQ(llm_error_from_http(401, R"({"error":{"message":"Incorrect API key"}})").kind(),
            LlmErrorKind::auth);
  EXPECT_EQ(llm_error_from_http(
                429, R"({"error":{"code":"insufficient_quota","message":"You exceeded your quota"}})")
                .kind(),
            LlmErrorKind::spend_limit);
  EXPECT_EQ(llm_error_from_http(400, R"({"error":{"message":"Your credit balance is too low"}})").kind(),
            LlmErrorKind::spend_limit);
  EXPECT_EQ(llm_error_from_http(429, "{}").kind(), LlmErrorKind::rate_limited);
  EXPECT_EQ(llm_error_from_http(529, "").kind(), LlmErrorKind::overloaded);
  EXPECT_EQ(llm_error_from_http(503, "bad gateway").kind(), LlmErrorKind::server_error);
  EXPECT_EQ(llm_error_from_http(404, "").kind(), LlmErrorKind::bad_request);
  EXPECT_NE(std::string(llm_error_from_http(401, R"({"error":{"message":"Incorrect API key"}})").what())
                .find("Incorrect API key"),
            std::string::npos);
}

}  // namespace
}  // namespace nova
