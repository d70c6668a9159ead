#include "core/worker/child_process.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;

namespace nova {
using namespace std::chrono;

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
  return env;
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

  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    setpgid(0, 0);  // own process group: terminate() reaches grandchildren too
    if (!working_dir.empty() && chdir(working_dir.c_str()) != 0) {
      int e = errno;
      (void)!::write(exec_pipe[1], &e, sizeof e);
      _exit(127);
    }
    environ = cenv.data();
    execvp(cargv[0], cargv.data());
    int e = errno;
    (void)!::write(exec_pipe[1], &e, sizeof e);
    _exit(127);
  }
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

void ChildProcess::pump(int timeout_ms) {
  pollfd fds[2];
  int nfds = 0;
  if (!out_eof_) fds[nfds++] = {out_fd_, POLLIN, 0};
  if (!err_eof_) fds[nfds++] = {err_fd_, POLLIN, 0};
  if (nfds == 0) return;
  int r = ::poll(fds, nfds, timeout_ms);
  if (r <= 0) return;
  char buf[65536];
  for (int i = 0; i < nfds; ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    bool is_out = fds[i].fd == out_fd_;
    for (;;) {
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (is_out ? out_buf_ : err_buf_).append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) (is_out ? out_eof_ : err_eof_) = true;
      break;  // EAGAIN or EOF
    }
  }
}

std::optional<std::string> ChildProcess::read_line(milliseconds timeout) {
  auto deadline = steady_clock::now() + timeout;
  for (;;) {
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
  int st = 0;
  pid_t r;
  do r = ::waitpid(pid_, &st, block ? 0 : WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  ExitStatus es;
  if (r > 0) {
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
    if (out_eof_ && err_eof_) ::usleep(2000);
  }
}

ExitStatus ChildProcess::terminate(milliseconds grace) {
  if (pid_ <= 0) return {};
  if (!status_) {
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
    if (p.out_eof_ && p.err_eof_ && p.reap(false)) break;
    if (steady_clock::now() > deadline) {
      r.timed_out = true;
      p.terminate();
      p.pump(0);
      break;
    }
  }
  p.reap(true);
  r.status = *p.status_;
  r.out = std::move(p.out_buf_);
  r.err = std::move(p.err_buf_);
  return r;
}

}  // namespace nova
