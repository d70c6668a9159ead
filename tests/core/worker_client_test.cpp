// The persistent worker over the worker protocol: the hello and its version check, request ids,
// typed errors (a bad request, the user's error with its file and line), a crash and a timeout
// that end the worker, and cancel: honoured at a safe point (the worker stays), or ignored (the
// worker is ended after the grace period).
#include "core/worker/worker_client.h"

#include <fstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/env/settings.h"
#include "support/test_paths.h"
#include "support/worker_python.h"

using namespace std::chrono_literals;
using nlohmann::json;

namespace nova {
namespace {

// True after `after` has passed since the first call.
std::function<bool()> cancel_after(std::chrono::milliseconds after) {
  auto at = std::make_shared<std::optional<std::chrono::steady_clock::time_point>>();
  return [at, after] {
    if (!*at) *at = std::chrono::steady_clock::now() + after;
    return std::chrono::steady_clock::now() >= **at;
  };
}

TEST(WorkerClient, HandshakeReportsInterpreterTorchAndProtocol) {
  WorkerClient worker;
  const WorkerInfo& info = worker.start();
  EXPECT_EQ(info.protocol, WorkerClient::kProtocolVersion);
  EXPECT_EQ(info.protocol, 2);
  EXPECT_EQ(info.mode, "persistent");
  EXPECT_GT(info.pid, 0);
  EXPECT_FALSE(info.python.empty());
  EXPECT_EQ(info.torch.rfind("2.", 0), 0u) << info.torch << " / " << info.torch_error;
  EXPECT_NE(std::find(info.commands.begin(), info.commands.end(), "intake"), info.commands.end());
  EXPECT_NE(std::find(info.commands.begin(), info.commands.end(), "profile"), info.commands.end());
  if (!info.cuda_available) EXPECT_TRUE(info.devices.empty());

  json pong = worker.request("ping", json::object(), 10s);
  EXPECT_EQ(pong.value("pid", 0), info.pid);

  // User code printing (Python print and a raw write to fd 1) must not break the protocol.
  json printed = worker.request("_print", {{"text", "user says hi"}}, 10s);
  EXPECT_TRUE(printed.value("printed", false));
  EXPECT_EQ(worker.request("ping", json::object(), 10s).value("pid", 0), info.pid);
  EXPECT_NE(worker.stderr_tail().find("user says hi"), std::string::npos);
  EXPECT_NE(worker.stderr_tail().find("raw write to fd 1"), std::string::npos);

  try {
    worker.request("no_such_command", json::object(), 10s);
    FAIL() << "unknown command accepted";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.kind(), WorkerError::Kind::BadRequest);
    EXPECT_NE(std::string(e.what()).find("no_such_command"), std::string::npos);
  }
  try {
    worker.request("_fail", {{"kind", "internal"}, {"message", "CUDA error: out of memory"}}, 10s);
    FAIL() << "no error";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.kind(), WorkerError::Kind::Internal);
    EXPECT_STREQ(e.what(), "CUDA error: out of memory");
  }
  EXPECT_EQ(worker.workers_started(), 1);  // answered errors leave the worker as it was
}

TEST(WorkerClient, AnErrorInTheUsersModelIsAUserErrorWithFileAndLine) {
  std::string python = Settings{}.resolved_python();
  if (!test::has_torch(python)) GTEST_SKIP() << python << " has no torch";
  auto model = test::scratch_dir("worker_user_error") / "raises_in_forward.py";
  std::ofstream(model) << R"(import torch


class Model(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        raise ValueError("the model refuses")


def get_inputs():
    return [torch.ones(2)]


def get_init_inputs():
    return []
)";
  WorkerClient worker(python);
  try {
    worker.request("intake", {{"model", model.string()}}, 120s);
    FAIL() << "no error";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.kind(), WorkerError::Kind::UserError) << e.what();
    EXPECT_EQ(e.file(), model.string());
    EXPECT_EQ(e.line(), 7);
    EXPECT_NE(std::string(e.what()).find("ValueError: the model refuses (raises_in_forward.py:7)"),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.traceback().find("raise ValueError"), std::string::npos) << e.traceback();
  }
  EXPECT_TRUE(worker.running());
  EXPECT_EQ(worker.workers_started(), 1);
}

TEST(WorkerClient, CrashIsReportedPlainlyAndTheNextRequestGetsAFreshWorker) {
  WorkerClient worker;
  const int first_pid = worker.start().pid;
  std::vector<std::string> progress;
  try {
    worker.request("_crash", json::object(), 30s,
                   [&](const std::string& m, std::optional<double>) { progress.push_back(m); });
    FAIL() << "the crash went unnoticed";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.kind(), WorkerError::Kind::Crashed);
    EXPECT_EQ(std::string(e.what()), "worker crashed: SIGSEGV while crashing on purpose");
  }
  EXPECT_EQ(progress, std::vector<std::string>{"crashing on purpose"});
  EXPECT_FALSE(worker.running());
  json pong = worker.request("ping", json::object(), 10s);
  EXPECT_NE(pong.value("pid", 0), first_pid);
  EXPECT_EQ(worker.workers_started(), 2);
}

TEST(WorkerClient, TimeoutStopsTheWorker) {
  WorkerClient worker;
  worker.start();
  auto t0 = std::chrono::steady_clock::now();
  try {
    worker.request("_sleep", {{"seconds", 60}}, 1500ms);
    FAIL() << "no timeout";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.kind(), WorkerError::Kind::Timeout);
    // The timeout as given (1.5 s), not rounded to whole seconds.
    EXPECT_NE(std::string(e.what()).find("timed out after 1.5 s while sleeping"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_FALSE(worker.running());
  EXPECT_TRUE(worker.request("ping", json::object(), 10s).value("pong", false));
}

TEST(WorkerClient, ACancelledRequestStopsAtASafePointAndTheWorkerStays) {
  WorkerClient worker;
  const int pid = worker.start().pid;
  auto t0 = std::chrono::steady_clock::now();
  try {
    worker.request("_sleep", {{"seconds", 60}}, 30s, {}, cancel_after(300ms));
    FAIL() << "not cancelled";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.kind(), WorkerError::Kind::Cancelled);
    EXPECT_STREQ(e.what(), "cancelled while sleeping");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);  // well inside the grace period
  EXPECT_TRUE(worker.running());
  EXPECT_EQ(worker.request("ping", json::object(), 10s).value("pid", 0), pid);
  EXPECT_EQ(worker.workers_started(), 1);
}

TEST(WorkerClient, AWorkerThatIgnoresTheCancelIsEndedAfterTheGrace) {
  WorkerClient worker;
  const int pid = worker.start().pid;
  auto t0 = std::chrono::steady_clock::now();
  try {
    worker.request("_sleep", {{"seconds", 60}, {"honour_cancel", false}}, 30s, {}, cancel_after(200ms));
    FAIL() << "not cancelled";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.kind(), WorkerError::Kind::Cancelled);
    EXPECT_NE(std::string(e.what()).find("did not stop within 3 s and was ended"), std::string::npos)
        << e.what();
  }
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, 3s);
  EXPECT_LT(took, 10s);
  EXPECT_FALSE(worker.running());
  EXPECT_NE(worker.request("ping", json::object(), 10s).value("pid", 0), pid);
}

TEST(WorkerClient, RefusesAWorkerSpeakingAnotherProtocol) {
  auto dir = test::scratch_dir("worker_protocol_mismatch");
  auto fake = dir / "fake_python";
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\necho '{\"type\":\"hello\",\"protocol\":1,\"python\":\"3.0\"}'\nsleep 30\n";
  }
  ::chmod(fake.c_str(), 0755);
  WorkerClient worker(fake.string());
  auto t0 = std::chrono::steady_clock::now();
  try {
    worker.start();
    FAIL() << "protocol 1 accepted";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.kind(), WorkerError::Kind::Protocol);
    EXPECT_NE(std::string(e.what()).find("speaks protocol 1, this Nova speaks 2"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_FALSE(worker.running());
}

}  // namespace
}  // namespace nova
