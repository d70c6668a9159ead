#pragma once
// A child process with pipes on stdin, stdout and stderr: the one place that forks and execs.
// Used for the Python workers (line-delimited JSON over stdin/stdout), for nvcc builds and for
// one-shot probes. Reads are non-blocking with deadlines, so a hung child never hangs the caller;
// exit by signal is reported by name ("SIGSEGV").
//
// A child ends with its work and with us:
// - it leads its own process group, and the whole group ends with it: terminate() signals the group
//   (SIGTERM, then SIGKILL after the grace), and when the child itself exits, what it left running
//   (a subprocess a model started at import) is killed before the child is reaped;
// - it is killed (SIGKILL, PR_SET_PDEATHSIG) when this process dies, however it dies. Linux ties that
//   signal to the thread that forked, so every fork happens on one thread that lives as long as the
//   process: a child started from a short-lived thread (a QThread, a pool thread) outlives it.
// Processes that leave the group themselves (setsid) are out of reach, as are the grandchildren of
// a parent that is SIGKILLed (only the direct child gets the death signal).
//
// Output is bounded: stderr keeps its last stderr_tail_limit() bytes (1 MiB), led by a line that
// says how much was dropped ("[... 523 MB dropped ...]"); a stdout line longer than
// max_line_bytes() (256 MiB) is an error, not unbounded growth.
#include <chrono>
#include <cstddef>
#include <cstdint>
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
  std::string err;  // the stderr tail (see ChildProcess::stderr_text)
  bool timed_out = false;
  std::uint64_t err_dropped = 0;  // stderr bytes dropped from the front of `err`
};

class ChildProcess {
 public:
  using Env = std::map<std::string, std::string>;

  static constexpr std::size_t kStderrTailBytes = std::size_t{1} << 20;
  static constexpr std::size_t kMaxLineBytes = std::size_t{256} << 20;

  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (searched on PATH) with exactly `env` as its environment.
  // Throws std::runtime_error if the program cannot be started.
  void start(const std::vector<std::string>& argv, const Env& env, const std::string& working_dir = {});

  bool running() const { return pid_ > 0 && !status_; }
  pid_t pid() const { return pid_; }  // also the id of its process group

  // Writes all of `data` to the child's stdin. Returns false if the child closed it.
  bool write_stdin(const std::string& data);
  void close_stdin();

  // Next line from stdout (without '\n'), waiting at most `timeout`. nullopt on timeout or EOF;
  // eof() tells which. stderr is drained into stderr_text() meanwhile. A line longer than
  // max_line_bytes() ends the child and throws std::runtime_error.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  bool eof() const { return out_eof_; }

  // The stderr tail: the last stderr_tail_limit() bytes (up to a quarter more between trims), starting
  // at a line, led by "[... N MB dropped ...]\n" once anything was dropped.
  const std::string& stderr_text() const { return err_buf_; }
  std::uint64_t stderr_received() const { return err_received_; }  // bytes, in all
  std::uint64_t stderr_dropped() const { return err_dropped_; }    // bytes no longer held
  // The complete stderr lines received since the last call, for one consumer that relays them (a
  // job's log). Where the tail was trimmed past what was taken, one line says how much was dropped.
  std::vector<std::string> new_stderr_lines();

  // Limits for this child's output (tests use small ones); call before start().
  void set_output_limits(std::size_t stderr_tail_limit, std::size_t max_line_bytes);
  std::size_t stderr_tail_limit() const { return err_limit_; }
  std::size_t max_line_bytes() const { return line_limit_; }

  // Waits for exit up to `timeout`; nullopt if still running.
  std::optional<ExitStatus> wait(std::chrono::milliseconds timeout);
  // SIGTERM to the child's process group, then SIGKILL after `grace`; always reaps. Safe to call
  // twice.
  ExitStatus terminate(std::chrono::milliseconds grace = std::chrono::milliseconds(500));
  std::optional<ExitStatus> status() const { return status_; }

  // Runs to completion, capturing output; kills the child past `timeout`. Throws std::runtime_error
  // when the child writes more than kMaxLineBytes to stdout.
  static ProcessResult run(const std::vector<std::string>& argv, const Env& env,
                           std::chrono::milliseconds timeout, const std::string& stdin_data = {});

  // A minimal environment for children: PATH, HOME, LANG, plus what CUDA needs to find the
  // driver and devices. No secrets of the parent (API keys never reach a worker). Python writes no
  // .pyc files (PYTHONDONTWRITEBYTECODE=1): nothing lands in the installation it imports from.
  static Env minimal_env();

 private:
  void pump(int timeout_ms);  // reads whatever is available on stdout/stderr
  void append_stderr(const char* data, std::size_t n);
  bool reap(bool block);
  bool line_too_long() const;

  pid_t pid_ = -1;
  std::string program_;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  std::string out_buf_, err_buf_;
  std::size_t err_limit_ = kStderrTailBytes, line_limit_ = kMaxLineBytes;
  std::size_t err_marker_ = 0;  // the length of err_buf_'s "[... dropped ...]" line, 0 if none
  std::uint64_t err_received_ = 0, err_dropped_ = 0;
  std::uint64_t err_taken_ = 0;  // new_stderr_lines(): received bytes handed out so far
  bool out_eof_ = false, err_eof_ = false;
  std::optional<ExitStatus> status_;
};

}  // namespace nova
