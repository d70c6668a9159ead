// The sandbox for LLM-written code (core/sandbox/): the probe's answer is whether bubblewrap starts
// here (a bwrap that does not exist never does); the command line isolates everything the issue asks
// for; and, where the sandbox starts, a worker run through ChildProcessWorkerRunner with a WorkerCall's
// sandbox cannot reach a loopback server the test listens on, cannot write outside its private work
// folder (the project folder, $HOME), sees no provider key in its environment (nor does bwrap's own
// process), is ended by the watchdog past its budget with nothing left running, and still speaks the
// worker protocol: the real nova_worker answers `ping` through it. The
// same escape attempts succeed unsandboxed, so each check can fail. The sandboxed tests skip, with the
// probe's reason, only where the host kernel or container refuses the sandbox.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

#include <gtest/gtest.h>

#include "core/env/settings.h"
#include "core/jobs/child_process_worker_runner.h"
#include "core/jobs/worker_run_error.h"
#include "core/sandbox/bwrap_command.h"
#include "core/sandbox/sandbox_probe.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kKey = "sk-sandbox-secret-41c2e";

bool bwrap_starts_here() {
  try {
    ProcessResult r = ChildProcess::run({"bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"},
                                        ChildProcess::minimal_env(), std::chrono::seconds(20));
    return r.status.exited && r.status.code == 0;
  } catch (const std::exception&) {
    return false;  // no bwrap on PATH
  }
}

TEST(SandboxProbe, SaysWhetherBubblewrapStartsASandboxHere) {
  const SandboxStatus status = SandboxProbe::probe_now("bwrap");
  EXPECT_EQ(status.available, bwrap_starts_here()) << status.reason;
  EXPECT_EQ(status.reason.empty(), status.available) << status.reason;
  EXPECT_EQ(SandboxProbe::probe("bwrap").available, status.available);
}

TEST(SandboxProbe, ABwrapThatDoesNotExistCannotStartOne) {
  const SandboxStatus status = SandboxProbe::probe_now("/nonexistent/bwrap");
  EXPECT_FALSE(status.available);
  EXPECT_NE(status.reason.find("/nonexistent/bwrap"), std::string::npos) << status.reason;
}

TEST(BwrapCommand, IsolatesNetworkFilesAndEnvironment) {
  const fs::path work = test::scratch_dir("work");
  BwrapCommand command("bwrap", work);
  ChildProcess::Env env = {{"PATH", "/usr/bin:/bin"},         {"LANG", "C.UTF-8"},
                           {"CUDA_VISIBLE_DEVICES", "1"},     {"PYTHONPATH", "/opt/nova/python"},
                           {"NOVA_LLM_TEST_KEY", kKey},       {"OPENAI_API_KEY", kKey},
                           {"HOME", "/root"},                 {"SSH_AUTH_SOCK", "/tmp/agent"}};
  const auto argv = command.argv({"python3", "-m", "nova_worker"}, env);
  auto has = [&](std::vector<std::string> seq) {
    return std::search(argv.begin(), argv.end(), seq.begin(), seq.end()) != argv.end();
  };
  EXPECT_EQ(argv.front(), "bwrap");
  for (const char* flag : {"--unshare-all", "--unshare-net", "--die-with-parent", "--new-session", "--clearenv"})
    EXPECT_TRUE(has({flag})) << flag;
  EXPECT_TRUE(has({"--ro-bind", "/", "/"}));
  EXPECT_TRUE(has({"--proc", "/proc"}));
  EXPECT_TRUE(has({"--tmpfs", "/tmp"}));
  EXPECT_TRUE(has({"--bind", work.string(), work.string()}));
  // The only writable bind is the work folder.
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--bind"), 1);
  for (const auto& node : BwrapCommand::gpu_device_nodes()) EXPECT_TRUE(has({"--dev-bind-try", node, node})) << node;
  EXPECT_TRUE(has({"--", "python3", "-m", "nova_worker"}));
  EXPECT_TRUE(has({"--setenv", "HOME", work.string()}));
  EXPECT_TRUE(has({"--setenv", "CUDA_VISIBLE_DEVICES", "1"}));
  EXPECT_TRUE(has({"--setenv", "PYTHONPATH", "/opt/nova/python"}));
  EXPECT_EQ(std::find(argv.begin(), argv.end(), kKey), argv.end());
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "SSH_AUTH_SOCK"), argv.end());
  const ChildProcess::Env outside = command.scrub(env);
  EXPECT_FALSE(outside.count("NOVA_LLM_TEST_KEY"));
  EXPECT_FALSE(outside.count("OPENAI_API_KEY"));
  EXPECT_EQ(outside.at("HOME"), work.string());
}

// A loopback server the sandboxed worker tries to reach.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 4), 0);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~Listener() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1, port_ = 0;
};

class SandboxedWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    status_ = SandboxProbe::probe("bwrap");
    dir_ = test::scratch_dir("sandboxed_worker");
    fs::create_directories(dir_ / "project");
    auto pkg = dir_ / "escape_worker";
    fs::create_directories(pkg);
    std::ofstream(pkg / "__init__.py") << "";
    // Tries what LLM-written code must not do, and reports each outcome.
    std::ofstream(pkg / "__main__.py") << R"(import os, socket, sys, time
from nova_worker import server

def attempt(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return type(e).__name__ + ": " + str(e)

def write(path):
    with open(path, "w") as f:
        f.write("x")

def escape(args, progress):
    out = {"work_dir": args["work_dir"]}
    out["connect"] = attempt(lambda: socket.create_connection(("127.0.0.1", args["port"]), timeout=3).close())
    out["write_work"] = attempt(lambda: write(os.path.join(args["work_dir"], "scratch.txt")))
    out["write_project"] = attempt(lambda: write(os.path.join(args["project"], "escaped.txt")))
    out["write_home"] = attempt(lambda: write(os.path.join(args["home"], ".nova-sandbox-escape-%d" % args["pid"])))
    out["environ"] = open("/proc/self/environ", "rb").read().decode(errors="replace")
    try:
        out["init_environ"] = open("/proc/1/environ", "rb").read().decode(errors="replace")
    except OSError as e:
        out["init_environ"] = ""
    out["home"] = os.environ.get("HOME", "")
    return out

def stall(args, progress):
    progress("stalling")
    time.sleep(120)  # never checks for a cancel: only ending the process stops it
    return {}

sys.exit(server.main(commands={"escape": escape, "stall": stall}, preload_imports=lambda profile: None))
)";
    runner_ = std::make_unique<ChildProcessWorkerRunner>(Settings{}.resolved_python(), dir_ / "work");
    runner_->add_python_path(dir_);
    runner_->set_module_prefix("escape_worker.");
    home_ = std::getenv("HOME") ? std::getenv("HOME") : "/root";
    setenv("NOVA_LLM_TEST_KEY", kKey, 1);  // the provider's key, in the parent's environment
  }
  void TearDown() override {
    unsetenv("NOVA_LLM_TEST_KEY");
    std::error_code ec;
    fs::remove(home_ / fmt_escape_name(), ec);
  }
  std::string fmt_escape_name() const { return ".nova-sandbox-escape-" + std::to_string(getpid()); }

  json escape(const Listener& listener, bool sandboxed) {
    WorkerCall call;
    if (sandboxed) call.sandbox = SandboxSpec{"bwrap"};
    return runner_->run("escape",
                        {{"port", listener.port()},
                         {"project", (dir_ / "project").string()},
                         {"home", home_.string()},
                         {"pid", getpid()}},
                        call);
  }

  SandboxStatus status_;
  fs::path dir_, home_;
  std::unique_ptr<ChildProcessWorkerRunner> runner_;
};

TEST_F(SandboxedWorker, CannotReachTheNetworkNorWriteOutsideItsWorkFolderNorSeeTheKey) {
  if (!status_.available) GTEST_SKIP() << "the sandbox cannot start here: " << status_.reason;
  Listener listener;
  const json r = escape(listener, true);
  EXPECT_NE(r["connect"], "ok") << r.dump(2);
  EXPECT_EQ(r["write_work"], "ok") << r.dump(2);
  EXPECT_NE(r["write_project"], "ok") << r.dump(2);
  EXPECT_NE(r["write_home"], "ok") << r.dump(2);
  EXPECT_FALSE(fs::exists(dir_ / "project" / "escaped.txt"));
  EXPECT_FALSE(fs::exists(home_ / fmt_escape_name()));
  EXPECT_EQ(r["home"], r["work_dir"]);  // HOME is the private work folder
  EXPECT_EQ(r["environ"].get<std::string>().find(kKey), std::string::npos);
  EXPECT_EQ(r["environ"].get<std::string>().find("NOVA_LLM_TEST_KEY"), std::string::npos);
  EXPECT_EQ(r["init_environ"].get<std::string>().find(kKey), std::string::npos);
  // The private work folder is a fresh one under the runner's, removed after the run.
  const fs::path work = r["work_dir"].get<std::string>();
  EXPECT_EQ(work.parent_path(), dir_ / "work");
  EXPECT_FALSE(fs::exists(work));
}

// The watchdog reaches into the sandbox: a worker past its budget that ignores the cancel is ended with
// bwrap (--die-with-parent), and nothing of it is left running.
TEST_F(SandboxedWorker, TheWatchdogEndsAWorkerInsideTheSandbox) {
  if (!status_.available) GTEST_SKIP() << "the sandbox cannot start here: " << status_.reason;
  WorkerCall call;
  call.sandbox = SandboxSpec{"bwrap"};
  call.budget = std::chrono::seconds(2);
  const auto started = std::chrono::steady_clock::now();
  try {
    runner_->run("stall", json::object(), call);
    ADD_FAILURE() << "the stalled worker answered";
  } catch (const WorkerRunError& e) {
    EXPECT_EQ(e.kind(), WorkerRunError::Kind::TimedOut) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  // No process whose HOME is one of this runner's sandbox folders survives (bwrap's or the worker's).
  const std::string marker = "HOME=" + (dir_ / "work" / "sandbox-").string();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "environ", std::ios::binary);
    std::string environ((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(environ.find(marker), std::string::npos) << "left running: " << entry.path();
  }
}

TEST_F(SandboxedWorker, TheSameAttemptsSucceedUnsandboxed) {
  Listener listener;
  const json r = escape(listener, false);
  EXPECT_EQ(r["connect"], "ok") << r.dump(2);
  EXPECT_EQ(r["write_project"], "ok") << r.dump(2);
  EXPECT_TRUE(fs::exists(dir_ / "project" / "escaped.txt"));
  // Even unsandboxed, a worker never gets the parent's secrets (ChildProcess::minimal_env).
  EXPECT_EQ(r["environ"].get<std::string>().find(kKey), std::string::npos);
}

TEST(SandboxedRealWorker, AnswersOverTheWorkerProtocol) {
  const SandboxStatus status = SandboxProbe::probe("bwrap");
  if (!status.available) GTEST_SKIP() << "the sandbox cannot start here: " << status.reason;
  const fs::path dir = test::scratch_dir("real_worker");
  ChildProcessWorkerRunner runner(Settings{}.resolved_python(), dir / "work");
  WorkerCall call;
  call.sandbox = SandboxSpec{"bwrap"};
  const json r = runner.run("ping", json::object(), call);
  EXPECT_EQ(r["pong"], true) << r.dump();
  EXPECT_EQ(r["pid"], 2) << "the worker runs in a PID namespace of its own under bwrap's init";
}

}  // namespace
}  // namespace nova
