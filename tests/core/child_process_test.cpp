#include "core/worker/child_process.h"

#include <gtest/gtest.h>

using namespace std::chrono_literals;

namespace nova {
namespace {

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

}  // namespace
}  // namespace nova
