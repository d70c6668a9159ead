#pragma once
// Static checks on a candidate's source before anything runs (docs/BENCHMARKING.md): a kernel must
// exist and be launched; calls into PyTorch compute ops are reported (library-backed is allowed,
// but said); try/catch fallbacks, host code that shells out or opens sockets, and host code that
// moves work to a stream of its own are refused. Works on NVRTC device code (fast path: launches
// come from the plan) and on full torch-extension sources. Used by CandidateEvaluator and the CLI.
#include <string>
#include <vector>

#include "core/gen/candidate.h"

namespace nova {

struct StaticReport {
  std::vector<std::string> kernels;        // __global__ functions defined
  std::vector<std::string> launched;       // kernels launched (<<<>>> or plan steps)
  std::vector<std::string> library_calls;  // PyTorch compute ops the source or plan calls
  std::vector<std::string> refusals;       // reasons the candidate must not run
  bool refused() const { return !refusals.empty(); }
};

class StaticChecker {
 public:
  // A full extension source (host code plus kernels, launched with <<<>>>).
  StaticReport check_extension(const std::string& source) const;
  // A fast-path candidate: its device code, with launches and library calls from its plan.
  StaticReport check_candidate(const Candidate& candidate) const;
  // The source without comments and with string literals emptied (so words inside them don't count).
  static std::string strip(const std::string& source);

 private:
  void check_common(const std::string& code, StaticReport& report) const;
};

}  // namespace nova
