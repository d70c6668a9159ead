#include "core/worker/worker_client.h"

#include <fstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "support/test_paths.h"

using namespace std::chrono_literals;
using nlohmann::json;

namespace nova {
namespace {

TEST(WorkerClient, HandshakeReportsInterpreterTorchAndProtocol) {
  WorkerClient worker;
  const WorkerInfo& info = worker.start();
  EXPECT_EQ(info.protocol, WorkerClient::kProtocolVersion);
  EXPECT_GT(info.pid, 0);
  EXPECT_FALSE(info.python.empty());
  EXPECT_EQ(info.torch.rfind("2.", 0), 0u) << info.torch << " / " << info.torch_error;
  EXPECT_NE(std::find(info.commands.begin(), info.commands.end(), "intake"), info.commands.end());
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
    EXPECT_EQ(e.kind(), WorkerError::Kind::Protocol);
    EXPECT_NE(std::string(e.what()).find("no_such_command"), std::string::npos);
  }
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
    EXPECT_NE(std::string(e.what()).find("timed out after 2 s while sleeping"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_FALSE(worker.running());
  EXPECT_TRUE(worker.request("ping", json::object(), 10s).value("pong", false));
}

TEST(WorkerClient, RefusesAWorkerSpeakingAnotherProtocol) {
  auto dir = test::scratch_dir("worker_protocol_mismatch");
  auto fake = dir / "fake_python";
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\necho '{\"type\":\"hello\",\"protocol\":99,\"python\":\"3.0\"}'\nsleep 30\n";
  }
  ::chmod(fake.c_str(), 0755);
  WorkerClient worker(fake.string());
  try {
    worker.start();
    FAIL() << "protocol 99 accepted";
  } catch (const WorkerError& e) {
    EXPECT_EQ(e.kind(), WorkerError::Kind::Protocol);
    EXPECT_NE(std::string(e.what()).find("speaks protocol 99, this Nova speaks 1"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(worker.running());
}

}  // namespace
}  // namespace nova
