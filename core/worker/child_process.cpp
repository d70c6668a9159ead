#include "core/worker/child_process.h"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;

namespace nova {
using namespace std::chrono;

namespace {

// What one fork asks of the fork thread.
struct ForkRequest {
  const std::function<void()>* in_child = nullptr;  // runs in the child and never returns
  pid_t pid = -1;
  int error = 0;
  bool done = false;
};

// The thread every fork happens on, and its queue. PR_SET_PDEATHSIG fires when the thread that forked
// ends, not the process, so this thread never ends: it is leaked on purpose and dies with the process.
struct ForkThread {
  pid_t owner = 0;  // the process it runs in: a fork()ed copy of this process has no such thread
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<ForkRequest*> queue;
};

std::atomic<ForkThread*> g_fork_thread{nullptr};

[[noreturn]] void fork_loop(ForkThread* thread) {
  std::unique_lock lock(thread->mutex);
  for (;;) {
    thread->changed.wait(lock, [&] { return !thread->queue.empty(); });
    ForkRequest* request = thread->queue.front();
    thread->queue.pop_front();
    pid_t pid = ::fork();
    if (pid == 0) (*request->in_child)();
    request->pid = pid;
    request->error = pid < 0 ? errno : 0;
    request->done = true;
    thread->changed.notify_all();
  }
}

ForkThread* fork_thread() {
  ForkThread* current = g_fork_thread.load();
  if (current && current->owner == ::getpid()) return current;
  auto* fresh = new ForkThread;
  fresh->owner = ::getpid();
  if (!g_fork_thread.compare_exchange_strong(current, fresh)) {
    delete fresh;  // another thread of this process started one first
    return current;
  }
  std::thread(fork_loop, fresh).detach();
  return fresh;
}

// fork() on the fork thread; `in_child` runs in the child (async-signal-safe calls only).
pid_t fork_on_lasting_thread(const std::function<void()>& in_child) {
  ForkThread* thread = fork_thread();
  ForkRequest request;
  request.in_child = &in_child;
  std::unique_lock lock(thread->mutex);
  thread->queue.push_back(&request);
  thread->changed.notify_all();
  thread->changed.wait(lock, [&] { return request.done; });
  if (request.pid < 0) errno = request.error;
  return request.pid;
}

// "523 MB", "12 KB", "300 bytes".
std::string amount(std::uint64_t bytes) {
  if (bytes >= 1000000) return fmt::format("{} MB", bytes / 1000000);
  if (bytes >= 1000) return fmt::format("{} KB", bytes / 1000);
  return fmt::format("{} bytes", bytes);
}

std::string dropped_line(std::uint64_t bytes) { return fmt::format("[... {} dropped ...]", amount(bytes)); }

constexpr std::size_t kReadChunk = 65536;
constexpr int kReadsPerPump = 16;  // at most 1 MiB per stream per pump, so deadlines hold

}  // namespace

std::string ExitStatus::describe() const {
  if (exited) return fmt::format("exit code {}", code);
  if (signal) {
    const char* abbrev = sigabbrev_np(signal);
    return fmt::format("killed by SIG{}", abbrev ? abbrev : std::to_string(signal));
  }
  return "still running";
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) terminate(milliseconds(200));
  for (int fd : {in_fd_, out_fd_, err_fd_})
    if (fd >= 0) ::close(fd);
}

ChildProcess::Env ChildProcess::minimal_env() {
  Env env;
  for (const char* key :
       {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
        "CUDA_HOME", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"}) {
    if (const char* v = std::getenv(key)) env[key] = v;
  }
  if (!env.count("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  env["PYTHONDONTWRITEBYTECODE"] = "1";
  return env;
}

void ChildProcess::set_output_limits(std::size_t stderr_tail_limit, std::size_t max_line_bytes) {
  if (stderr_tail_limit == 0 || max_line_bytes == 0)
    throw std::invalid_argument("ChildProcess::set_output_limits: limits must be positive");
  err_limit_ = stderr_tail_limit;
  line_limit_ = max_line_bytes;
}

void ChildProcess::start(const std::vector<std::string>& argv, const Env& env,
                         const std::string& working_dir) {
  if (argv.empty()) throw std::runtime_error("ChildProcess::start: empty command");
  int in_pipe[2], out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC) ||
      pipe2(exec_pipe, O_CLOEXEC))
    throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));

  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (auto& e : env_strings) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  const pid_t parent = ::getpid();
  // In the child: async-signal-safe calls only (another thread may hold any lock at the fork).
  const std::function<void()> in_child = [&] {
    auto fail = [&] {
      int e = errno;
      (void)!::write(exec_pipe[1], &e, sizeof e);
      _exit(127);
    };
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    setpgid(0, 0);  // own process group: terminate() reaches grandchildren too
    // Die with the parent, however it dies; if it died before this line, nobody is left to wait.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail();
    if (::getppid() != parent) _exit(127);
    // A clean slate for the program: no blocked signals, SIGPIPE as default (the parent ignores it).
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, nullptr);
    if (!working_dir.empty() && chdir(working_dir.c_str()) != 0) fail();
    environ = cenv.data();
    execvp(cargv[0], cargv.data());
    fail();
  };
  pid_t pid = fork_on_lasting_thread(in_child);
  if (pid < 0) {
    int e = errno;
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], exec_pipe[0],
                   exec_pipe[1]})
      ::close(fd);
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(e)));
  }
  setpgid(pid, pid);  // the child does so too; whichever runs first, the group exists before we signal it
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);
  int child_errno = 0;
  ssize_t n;
  do n = ::read(exec_pipe[0], &child_errno, sizeof child_errno);
  while (n < 0 && errno == EINTR);
  ::close(exec_pipe[0]);
  pid_ = pid;
  program_ = argv[0];
  in_fd_ = in_pipe[1];
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  fcntl(out_fd_, F_SETFL, O_NONBLOCK);
  fcntl(err_fd_, F_SETFL, O_NONBLOCK);
  if (n == sizeof child_errno) {
    reap(true);
    throw std::runtime_error(fmt::format("cannot start '{}': {}", argv[0], std::strerror(child_errno)));
  }
}

bool ChildProcess::write_stdin(const std::string& data) {
  if (in_fd_ < 0) return false;
  // A dead reader must give EPIPE here, not kill the caller.
  static const bool sigpipe_ignored = [] {
    std::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)sigpipe_ignored;
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(in_fd_, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

void ChildProcess::close_stdin() {
  if (in_fd_ >= 0) ::close(in_fd_);
  in_fd_ = -1;
}

void ChildProcess::append_stderr(const char* data, std::size_t n) {
  err_buf_.append(data, n);
  err_received_ += n;
  std::size_t held = err_buf_.size() - err_marker_;
  if (held <= err_limit_ + err_limit_ / 4) return;  // trimmed in steps, not on every read
  std::size_t cut = held - err_limit_;
  // The tail starts at a line where one starts nearby.
  std::size_t nl = err_buf_.find('\n', err_marker_ + cut);
  if (nl != std::string::npos && nl + 1 < err_buf_.size() && nl - (err_marker_ + cut) < 4096)
    cut = nl + 1 - err_marker_;
  err_dropped_ += cut;
  std::string marker = dropped_line(err_dropped_) + "\n";
  err_buf_.replace(0, err_marker_ + cut, marker);
  err_marker_ = marker.size();
}

std::vector<std::string> ChildProcess::new_stderr_lines() {
  std::vector<std::string> lines;
  if (err_taken_ < err_dropped_) {
    lines.push_back(dropped_line(err_dropped_ - err_taken_));
    err_taken_ = err_dropped_;
  }
  std::size_t pos = err_marker_ + static_cast<std::size_t>(err_taken_ - err_dropped_);
  for (std::size_t nl; (nl = err_buf_.find('\n', pos)) != std::string::npos; pos = nl + 1)
    lines.push_back(err_buf_.substr(pos, nl - pos));
  err_taken_ = err_dropped_ + (pos - err_marker_);
  return lines;
}

void ChildProcess::pump(int timeout_ms) {
  pollfd fds[2];
  int nfds = 0;
  // stdout stops being read past the line limit: the child waits on a full pipe, not our memory.
  if (!out_eof_ && out_buf_.size() <= line_limit_) fds[nfds++] = {out_fd_, POLLIN, 0};
  if (!err_eof_) fds[nfds++] = {err_fd_, POLLIN, 0};
  if (nfds == 0) {
    if (timeout_ms > 0) ::usleep(static_cast<useconds_t>(std::min(timeout_ms, 2)) * 1000);
    return;
  }
  int r = ::poll(fds, nfds, timeout_ms);
  if (r <= 0) return;
  char buf[kReadChunk];
  for (int i = 0; i < nfds; ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    bool is_out = fds[i].fd == out_fd_;
    for (int reads = 0; reads < kReadsPerPump; ++reads) {
      if (is_out && out_buf_.size() > line_limit_) break;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        if (is_out)
          out_buf_.append(buf, static_cast<size_t>(n));
        else
          append_stderr(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) (is_out ? out_eof_ : err_eof_) = true;
      if (n < 0 && errno == EINTR) continue;
      break;  // EAGAIN or EOF
    }
  }
}

bool ChildProcess::line_too_long() const {
  auto nl = out_buf_.find('\n');
  return nl == std::string::npos ? out_buf_.size() > line_limit_ : nl > line_limit_;
}

std::optional<std::string> ChildProcess::read_line(milliseconds timeout) {
  auto deadline = steady_clock::now() + timeout;
  for (;;) {
    if (line_too_long()) {
      terminate();
      throw std::runtime_error(fmt::format("'{}' wrote a line of more than {} to its output: ended it",
                                           program_, amount(line_limit_)));
    }
    if (auto pos = out_buf_.find('\n'); pos != std::string::npos) {
      std::string line = out_buf_.substr(0, pos);
      out_buf_.erase(0, pos + 1);
      return line;
    }
    if (out_eof_) return std::nullopt;
    auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) return std::nullopt;
    pump(static_cast<int>(std::min<long long>(left, 100)));
  }
}

bool ChildProcess::reap(bool block) {
  if (pid_ <= 0 || status_) return true;
  // Look without reaping first: while the child is a zombie its pid still names its process group,
  // so what it left running (a model's subprocesses) is ended before the pid can be reused.
  siginfo_t info{};
  int r;
  do r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
  while (r < 0 && errno == EINTR);
  if (r == 0 && info.si_pid == 0) return false;  // still running
  ::kill(-pid_, SIGKILL);
  int st = 0;
  pid_t w;
  do w = ::waitpid(pid_, &st, 0);
  while (w < 0 && errno == EINTR);
  ExitStatus es;
  if (w > 0) {
    if (WIFEXITED(st)) {
      es.exited = true;
      es.code = WEXITSTATUS(st);
    } else if (WIFSIGNALED(st)) {
      es.signal = WTERMSIG(st);
    }
  }
  status_ = es;
  return true;
}

std::optional<ExitStatus> ChildProcess::wait(milliseconds timeout) {
  auto deadline = steady_clock::now() + timeout;
  for (;;) {
    if (reap(false)) {
      pump(0);
      return status_;
    }
    auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) return std::nullopt;
    pump(static_cast<int>(std::min<long long>(left, 20)));
  }
}

ExitStatus ChildProcess::terminate(milliseconds grace) {
  if (pid_ <= 0) return {};
  if (!status_) {
    // The group, and the child itself in case it left the group.
    ::kill(-pid_, SIGTERM);
    ::kill(pid_, SIGTERM);
    if (!wait(grace)) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      reap(true);
    }
  }
  return *status_;
}

ProcessResult ChildProcess::run(const std::vector<std::string>& argv, const Env& env, milliseconds timeout,
                                const std::string& stdin_data) {
  ChildProcess p;
  p.start(argv, env);
  p.write_stdin(stdin_data);
  p.close_stdin();
  ProcessResult r;
  auto deadline = steady_clock::now() + timeout;
  for (;;) {
    p.pump(50);
    if (p.out_buf_.size() > p.line_limit_) {
      p.terminate();
      throw std::runtime_error(
          fmt::format("'{}' wrote more than {} to its output: ended it", argv[0], amount(p.line_limit_)));
    }
    if (p.reap(false)) {
      // Its group is ended with it; what is left in the pipes arrives shortly (a process that left
      // the group and still holds them is not waited for past a second).
      auto drained = steady_clock::now() + seconds(1);
      while (!(p.out_eof_ && p.err_eof_) && steady_clock::now() < drained && p.out_buf_.size() <= p.line_limit_)
        p.pump(20);
      break;
    }
    if (steady_clock::now() > deadline) {
      r.timed_out = true;
      p.terminate();
      p.pump(0);
      break;
    }
  }
  r.status = *p.status_;
  r.out = std::move(p.out_buf_);
  r.err = std::move(p.err_buf_);
  r.err_dropped = p.err_dropped_;
  return r;
}

}  // namespace nova
