// ChildProcess: output and exit status, deadlines, the minimal environment, processes that end with
// their work (the whole process group, with the parent, not with the thread that started them) and
// output that stays bounded.
#include "core/worker/child_process.h"

#include <dirent.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace std::chrono_literals;

namespace nova {
namespace {

// /proc/<pid>/stat's state and process group; nullopt when the process is gone.
struct ProcStat {
  char state = '?';
  pid_t pgrp = 0;
};

std::optional<ProcStat> proc_stat(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  ProcStat st;
  pid_t ppid = 0;
  rest >> st.state >> ppid >> st.pgrp;
  return st;
}

bool alive(pid_t pid) {
  auto st = proc_stat(pid);
  return st && st->state != 'Z' && st->state != 'X';
}

// The live (not zombie) processes of process group `pgid`.
std::vector<pid_t> group_members(pid_t pgid) {
  std::vector<pid_t> out;
  DIR* proc = ::opendir("/proc");
  while (dirent* e = proc ? ::readdir(proc) : nullptr) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    auto st = proc_stat(static_cast<pid_t>(pid));
    if (st && st->pgrp == pgid && st->state != 'Z' && st->state != 'X') out.push_back(static_cast<pid_t>(pid));
  }
  if (proc) ::closedir(proc);
  return out;
}

// Polls `done` for up to `limit`.
template <typename F>
bool eventually(F done, std::chrono::milliseconds limit = 5s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

std::size_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

TEST(ChildProcess, CapturesOutputAndExitCode) {
  auto r =
      ChildProcess::run({"sh", "-c", "echo out; echo err >&2; exit 3"}, ChildProcess::minimal_env(), 10s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(r.status.exited);
  EXPECT_EQ(r.status.code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.status.describe(), "exit code 3");
}

TEST(ChildProcess, ReportsDeathBySignalByName) {
  auto r = ChildProcess::run({"sh", "-c", "kill -SEGV $$"}, ChildProcess::minimal_env(), 10s);
  EXPECT_FALSE(r.status.exited);
  EXPECT_EQ(r.status.describe(), "killed by SIGSEGV");
}

TEST(ChildProcess, KillsAHungChildAtTheDeadline) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = ChildProcess::run({"sleep", "30"}, ChildProcess::minimal_env(), 300ms);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(ChildProcess, LineProtocolOverStdinAndStdout) {
  ChildProcess p;
  p.start({"sh", "-c", "while read l; do echo \"got $l\"; done"}, ChildProcess::minimal_env());
  ASSERT_TRUE(p.write_stdin("a\nb\n"));
  EXPECT_EQ(p.read_line(5s).value_or("<none>"), "got a");
  EXPECT_EQ(p.read_line(5s).value_or("<none>"), "got b");
  EXPECT_FALSE(p.read_line(100ms).has_value());  // nothing more yet: a timeout, not EOF
  EXPECT_FALSE(p.eof());
  p.close_stdin();
  auto st = p.wait(5s);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->code, 0);
}

TEST(ChildProcess, MissingProgramIsAPlainError) {
  ChildProcess p;
  try {
    p.start({"/nonexistent/program"}, ChildProcess::minimal_env());
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start '/nonexistent/program'"), std::string::npos);
  }
}

TEST(ChildProcess, MinimalEnvironmentDropsSecrets) {
  setenv("OPENAI_API_KEY", "sk-secret", 1);
  auto env = ChildProcess::minimal_env();
  EXPECT_EQ(env.count("OPENAI_API_KEY"), 0u);
  auto r = ChildProcess::run({"sh", "-c", "echo \"[$OPENAI_API_KEY]\""}, env, 10s);
  EXPECT_EQ(r.out, "[]\n");
  unsetenv("OPENAI_API_KEY");
}

TEST(ChildProcess, MinimalEnvironmentKeepsPythonFromWritingBytecode) {
  ::unsetenv("PYTHONDONTWRITEBYTECODE");
  auto env = ChildProcess::minimal_env();
  EXPECT_EQ(env["PYTHONDONTWRITEBYTECODE"], "1");
  auto r = ChildProcess::run({"sh", "-c", "echo \"[$PYTHONDONTWRITEBYTECODE]\""}, env, 10s);
  EXPECT_EQ(r.out, "[1]\n");
}

TEST(ChildProcess, TerminateEndsTheWholeProcessGroup) {
  ChildProcess p;
  // A child that starts a grandchild, as a model does that starts a subprocess at import.
  p.start({"sh", "-c", "sleep 1000 & sleep 1000; echo never"}, ChildProcess::minimal_env());
  ASSERT_TRUE(eventually([&] { return group_members(p.pid()).size() >= 3; }))
      << "the shell and its two sleeps did not appear in the child's group";
  auto status = p.terminate(200ms);
  EXPECT_EQ(status.describe(), "killed by SIGTERM");
  EXPECT_TRUE(eventually([&] { return group_members(p.pid()).empty(); }))
      << group_members(p.pid()).size() << " processes of the group are still running";
}

TEST(ChildProcess, AChildThatExitsTakesWhatItLeftRunningWithIt) {
  auto t0 = std::chrono::steady_clock::now();
  // The grandchild holds the pipes open: run() returns because the group ends with the child.
  auto r = ChildProcess::run({"sh", "-c", "sleep 1000 & echo $$"}, ChildProcess::minimal_env(), 30s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.status.describe(), "exit code 0");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  pid_t group = std::stoi(r.out);
  EXPECT_TRUE(eventually([&] { return group_members(group).empty(); }))
      << "the grandchild outlived the child that started it";
}

TEST(ChildProcess, AChildOutlivesTheThreadThatStartedIt) {
  // The parent-death signal belongs to the thread that forked: forks happen on one lasting thread.
  ChildProcess p;
  std::thread starter([&] { p.start({"sleep", "1000"}, ChildProcess::minimal_env()); });
  starter.join();
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(alive(p.pid()));
  EXPECT_FALSE(p.wait(0ms).has_value()) << "ended: " << p.status()->describe();
  p.terminate(200ms);
}

TEST(ChildProcess, AChildDiesWithItsParent) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {  // the helper: a parent that starts a worker and is then SIGKILLed
    ::close(report[0]);
    try {
      ChildProcess worker;
      worker.start({"sleep", "1000"}, ChildProcess::minimal_env());
      pid_t pid = worker.pid();
      (void)!::write(report[1], &pid, sizeof pid);
      for (;;) ::pause();
    } catch (...) {
      _exit(3);
    }
  }
  ::close(report[1]);
  pollfd wait_for_pid{report[0], POLLIN, 0};
  pid_t worker = 0;
  bool reported = ::poll(&wait_for_pid, 1, 10000) == 1 && ::read(report[0], &worker, sizeof worker) == sizeof worker;
  ::close(report[0]);
  ::kill(parent, SIGKILL);
  int st = 0;
  ::waitpid(parent, &st, 0);
  ASSERT_TRUE(reported) << "the helper did not start its worker";
  ASSERT_GT(worker, 0);
  EXPECT_TRUE(eventually([&] { return !alive(worker); })) << "the worker outlived its SIGKILLed parent";
  if (alive(worker)) ::kill(worker, SIGKILL);
}

TEST(ChildProcess, StderrKeepsABoundedTailAndSaysHowMuchWasDropped) {
  constexpr std::size_t kWritten = std::size_t{50} << 20;
  const std::size_t before = resident_bytes();
  ChildProcess p;
  p.start({"sh", "-c", fmt::format("yes 'a line a chatty model prints at import' | head -c {} >&2", kWritten)},
          ChildProcess::minimal_env());
  auto status = p.wait(60s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 0);
  // Held while the process object lives: the tail, not the 50 MB.
  const std::size_t after = resident_bytes();
  EXPECT_LT(after > before ? after - before : 0, std::size_t{16} << 20);
  const std::string& tail = p.stderr_text();
  EXPECT_EQ(p.stderr_received(), kWritten);
  auto first_nl = tail.find('\n');
  ASSERT_NE(first_nl, std::string::npos);
  EXPECT_EQ(tail.substr(0, first_nl), fmt::format("[... {} MB dropped ...]", p.stderr_dropped() / 1000000));
  EXPECT_EQ(p.stderr_dropped() + (tail.size() - first_nl - 1), kWritten);
  EXPECT_LE(tail.size() - first_nl - 1, ChildProcess::kStderrTailBytes + ChildProcess::kStderrTailBytes / 4);
  EXPECT_GE(tail.size() - first_nl - 1, ChildProcess::kStderrTailBytes - 100);
  // The tail starts at a line and ends with the last bytes written.
  EXPECT_EQ(tail.substr(first_nl + 1, 9), "a line a ");
}

TEST(ChildProcess, RelaysEachStderrLineOnceAndSaysWhatWasDropped) {
  ChildProcess p;
  p.set_output_limits(64, 1 << 20);
  p.start({"sh", "-c", "echo one >&2; echo two >&2; read go; seq 1 100 >&2; echo last >&2"},
          ChildProcess::minimal_env());
  std::vector<std::string> lines;
  ASSERT_TRUE(eventually([&] {
    p.read_line(10ms);
    for (auto& l : p.new_stderr_lines()) lines.push_back(l);
    return lines.size() >= 2;
  }));
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
  EXPECT_TRUE(p.new_stderr_lines().empty());  // each line once
  p.write_stdin("go\n");
  ASSERT_TRUE(p.wait(10s).has_value());
  lines = p.new_stderr_lines();
  ASSERT_GE(lines.size(), 3u);
  // "seq 1 100" is 292 bytes: most fell off the 64-byte tail before they were taken.
  EXPECT_EQ(lines.front().rfind("[... ", 0), 0u) << lines.front();
  EXPECT_NE(lines.front().find("bytes dropped ...]"), std::string::npos) << lines.front();
  EXPECT_EQ(lines.back(), "last");
  EXPECT_EQ(lines[lines.size() - 2], "100");
}

TEST(ChildProcess, AStdoutLineLongerThanTheLimitIsAnError) {
  ChildProcess p;
  p.set_output_limits(1 << 20, 4096);
  p.start({"sh", "-c", "echo short; head -c 100000 /dev/zero | tr '\\0' x; sleep 1000"}, ChildProcess::minimal_env());
  EXPECT_EQ(p.read_line(10s).value_or("<none>"), "short");
  try {
    p.read_line(10s);
    ADD_FAILURE() << "a line of 100000 bytes was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "'sh' wrote a line of more than 4 KB to its output: ended it");
  }
  EXPECT_FALSE(p.running());
  EXPECT_TRUE(eventually([&] { return group_members(p.pid()).empty(); }));
}

}  // namespace
}  // namespace nova
