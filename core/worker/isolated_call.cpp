#include "core/worker/isolated_call.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/worker/child_process.h"

namespace nova {
namespace {

// Writes all of `text` to `fd` (the child's side of the pipe); false when the reader is gone.
bool write_all(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

nlohmann::json IsolatedCall::run(const std::function<nlohmann::json()>& work, const std::string& what,
                                 std::chrono::milliseconds timeout) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw IsolatedCallError(fmt::format("cannot run {}: pipe: {}", what, std::strerror(errno)), 0);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw IsolatedCallError(fmt::format("cannot run {}: fork: {}", what, std::strerror(err)), 0);
  }
  if (pid == 0) {
    // The child: compute, answer, and leave without running the parent's atexit handlers or
    // destructors (they belong to the parent's threads and files).
    ::close(fds[0]);
    std::string answer;
    try {
      answer = nlohmann::json{{"ok", work()}}.dump();
    } catch (const std::exception& e) {
      answer = nlohmann::json{{"error", e.what()}}.dump();
    } catch (...) {
      answer = nlohmann::json{{"error", "an exception that is not a std::exception"}}.dump();
    }
    std::_Exit(write_all(fds[1], answer) ? 0 : 3);
  }
  ::close(fds[1]);
  std::string answer;
  char buf[65536];
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ExitStatus exit;
  exit.exited = WIFEXITED(status);
  exit.code = exit.exited ? WEXITSTATUS(status) : -1;
  exit.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (timed_out)
    throw IsolatedCallError(fmt::format("{} did not finish within {:g} s and was stopped", what,
                                        std::chrono::duration<double>(timeout).count()),
                            0);
  if (exit.signal) throw IsolatedCallError(fmt::format("{} crashed ({})", what, exit.describe()), exit.signal);
  auto j = nlohmann::json::parse(answer, nullptr, false);
  if (!exit.exited || exit.code != 0 || j.is_discarded() || !j.is_object())
    throw IsolatedCallError(fmt::format("{} ended without an answer ({})", what, exit.describe()), 0);
  if (j.contains("error")) throw IsolatedCallError(fmt::format("{} failed: {}", what, j["error"].get<std::string>()), 0);
  return j["ok"];
}

}  // namespace nova
