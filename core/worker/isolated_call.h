#pragma once
// Runs a piece of in-process work (the builtin generator on one fusion group) in a forked child, so
// that a crash in it (a stack overflow, an abort, a bad access) ends the child and not the studio or
// `nova`: the caller gets an IsolatedCallError naming the signal and goes on with the next piece.
// The work's answer comes back as JSON through a pipe. For computation only: the child must not
// touch the caller's threads, files or CUDA (it only computes and writes its answer, then _exit()s).
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace nova {

// The work crashed, exited without an answer, or threw: what() is one plain sentence.
class IsolatedCallError : public std::runtime_error {
 public:
  IsolatedCallError(const std::string& what, int signal) : std::runtime_error(what), signal_(signal) {}
  int signal() const { return signal_; }  // 0 unless the child died by a signal

 private:
  int signal_;
};

class IsolatedCall {
 public:
  // Runs `work` in a forked child and returns its JSON. `what` names the work in errors ("the builtin
  // generator on group 3"). Throws IsolatedCallError when the child dies by a signal ("... crashed
  // (killed by SIGSEGV)"), exits without an answer, the work throws (its message), or it runs past
  // `timeout` (the child is killed).
  static nlohmann::json run(const std::function<nlohmann::json()>& work, const std::string& what,
                            std::chrono::milliseconds timeout = std::chrono::minutes(5));
};

}  // namespace nova
