// IsolatedCall: work run in a forked child answers with its JSON; a crash (SIGSEGV from a stack
// overflow, an abort) ends the child and comes back as an error naming the signal, with the caller
// alive to run the next piece; an exception keeps its message; a large answer arrives whole.
#include "core/worker/isolated_call.h"

#include <csignal>
#include <cstdlib>

#include <unistd.h>

#include <gtest/gtest.h>

namespace nova {
namespace {

// Recurses without end: the stack overflow a deep chain once caused in the pointwise emitter.
int overflow(volatile int depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  return overflow(depth + 1) + frame[0];
}

TEST(IsolatedCall, ReturnsTheWorksAnswer) {
  auto j = IsolatedCall::run([] { return nlohmann::json{{"groups", 3}, {"rule", "row"}}; }, "the test work");
  EXPECT_EQ(j["groups"], 3);
  EXPECT_EQ(j["rule"], "row");
}

TEST(IsolatedCall, AStackOverflowEndsTheChildNotTheCallerAndIsNamed) {
  try {
    IsolatedCall::run([]() -> nlohmann::json { return overflow(0); }, "the builtin generator on group 7");
    ADD_FAILURE() << "the overflow did not crash";
  } catch (const IsolatedCallError& e) {
    EXPECT_EQ(e.signal(), SIGSEGV);
    EXPECT_STREQ(e.what(), "the builtin generator on group 7 crashed (killed by SIGSEGV)");
  }
  // The caller goes on: the next piece runs.
  EXPECT_EQ(IsolatedCall::run([] { return nlohmann::json(42); }, "next"), 42);
}

TEST(IsolatedCall, AnAbortIsNamedToo) {
  try {
    IsolatedCall::run([]() -> nlohmann::json { std::abort(); }, "work");
    ADD_FAILURE() << "abort returned";
  } catch (const IsolatedCallError& e) {
    EXPECT_EQ(e.signal(), SIGABRT);
    EXPECT_STREQ(e.what(), "work crashed (killed by SIGABRT)");
  }
}

TEST(IsolatedCall, AnExceptionKeepsItsMessage) {
  try {
    IsolatedCall::run([]() -> nlohmann::json { throw std::invalid_argument("no rule for aten.foo"); }, "work");
    ADD_FAILURE() << "the exception was lost";
  } catch (const IsolatedCallError& e) {
    EXPECT_EQ(e.signal(), 0);
    EXPECT_STREQ(e.what(), "work failed: no rule for aten.foo");
  }
}

TEST(IsolatedCall, AChildThatExitsWithoutAnswerIsAnError) {
  EXPECT_THROW(IsolatedCall::run([]() -> nlohmann::json { std::_Exit(0); }, "work"), IsolatedCallError);
}

TEST(IsolatedCall, ALargeAnswerArrivesWhole) {
  const std::string big(8 << 20, 'k');  // larger than any pipe buffer
  auto j = IsolatedCall::run([&] { return nlohmann::json{{"source", big}}; }, "work");
  EXPECT_EQ(j["source"].get<std::string>().size(), big.size());
}

}  // namespace
}  // namespace nova

namespace nova {
namespace {

TEST(IsolatedCall, WorkPastItsTimeoutIsStopped) {
  const auto started = std::chrono::steady_clock::now();
  try {
    IsolatedCall::run([]() -> nlohmann::json { for (;;) ::pause(); }, "work", std::chrono::milliseconds(300));
    ADD_FAILURE() << "the hung work returned";
  } catch (const IsolatedCallError& e) {
    EXPECT_STREQ(e.what(), "work did not finish within 0.3 s and was stopped");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

}  // namespace
}  // namespace nova
