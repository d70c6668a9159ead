#pragma once
// kernelguard (PyPI, a rule-based detector of known kernel-benchmark hacks: timer monkey-patching,
// fake benchmark output, replayed outputs, ...) run on an LLM's code before anything of it runs, as a
// second static check beside StaticChecker. It runs with the worker's Python in a child process with the
// workers' scrubbed environment; where it is not installed the verdict says so instead of passing.
#include <string>
#include <vector>

namespace nova {

struct KernelGuardVerdict {
  bool ran = false;
  std::string not_run;  // why it did not run ("kernelguard is not installed in ...")
  bool should_filter = false;
  std::string classification;         // "valid", "low_confidence", "hacked", ...
  std::string reason;                 // its filter reason, when it filters
  std::vector<std::string> patterns;  // "FAKE_BENCHMARK_EMIT (critical): builtins.print reassigned"
  std::string describe() const;       // one line for records and prompts
};

class KernelGuard {
 public:
  explicit KernelGuard(std::string python) : python_(std::move(python)) {}
  KernelGuardVerdict check(const std::string& code) const;

 private:
  std::string python_;
};

}  // namespace nova
