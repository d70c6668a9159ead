#pragma once
// A child process with pipes on stdin, stdout and stderr: the one place that forks and execs.
// Used for the Python workers (line-delimited JSON over stdin/stdout), for nvcc builds and for
// one-shot probes. Reads are non-blocking with deadlines, so a hung child never hangs the caller;
// exit by signal is reported by name ("SIGSEGV").
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace nova {

// How a child ended.
struct ExitStatus {
  bool exited = false;  // normal exit: code is valid
  int code = -1;
  int signal = 0;                // terminated by this signal (0 if none)
  std::string describe() const;  // "exit code 1", "killed by SIGSEGV"
};

struct ProcessResult {
  ExitStatus status;
  std::string out;
  std::string err;
  bool timed_out = false;
};

class ChildProcess {
 public:
  using Env = std::map<std::string, std::string>;

  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (searched on PATH) with exactly `env` as its environment.
  // Throws std::runtime_error if the program cannot be started.
  void start(const std::vector<std::string>& argv, const Env& env, const std::string& working_dir = {});

  bool running() const { return pid_ > 0 && !status_; }
  pid_t pid() const { return pid_; }

  // Writes all of `data` to the child's stdin. Returns false if the child closed it.
  bool write_stdin(const std::string& data);
  void close_stdin();

  // Next line from stdout (without '\n'), waiting at most `timeout`. nullopt on timeout or EOF;
  // eof() tells which. stderr is drained into stderr_text() meanwhile.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  bool eof() const { return out_eof_; }
  const std::string& stderr_text() const { return err_buf_; }

  // Waits for exit up to `timeout`; nullopt if still running.
  std::optional<ExitStatus> wait(std::chrono::milliseconds timeout);
  // SIGTERM, then SIGKILL after `grace`; always reaps. Safe to call twice.
  ExitStatus terminate(std::chrono::milliseconds grace = std::chrono::milliseconds(500));
  std::optional<ExitStatus> status() const { return status_; }

  // Runs to completion, capturing output; kills the child past `timeout`.
  static ProcessResult run(const std::vector<std::string>& argv, const Env& env,
                           std::chrono::milliseconds timeout, const std::string& stdin_data = {});

  // A minimal environment for children: PATH, HOME, LANG, plus what CUDA needs to find the
  // driver and devices. No secrets of the parent (API keys never reach a worker).
  static Env minimal_env();

 private:
  void pump(int timeout_ms);  // reads whatever is available on stdout/stderr
  bool reap(bool block);

  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  std::string out_buf_, err_buf_;
  bool out_eof_ = false, err_eof_ = false;
  std::optional<ExitStatus> status_;
};

}  // namespace nova
