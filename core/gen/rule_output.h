#pragma once
// What a builtin rule returns: its kernels (device code, no includes), the launch plan that runs
// them (plus any library steps), and a line on how it works, for the candidate's header comment.
#include <string>
#include <vector>

#include "core/gen/candidate.h"

namespace nova {

struct RuleOutput {
  std::string rule;     // e.g. "conv2d_direct"
  std::string kernels;  // extern "C" __global__ functions
  LaunchPlan plan;
  std::vector<std::string> library_ops;  // ATen ops called through libraries
  std::string notes;                     // how the kernels work
};

}  // namespace nova
