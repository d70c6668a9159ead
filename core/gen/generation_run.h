#pragma once
// The main job's generation step, shared by the studio and the CLI: every fusion group of a graph
// through the builtin generator, each candidate compiled with NVRTC, and the results stored in the
// project (one fusion-group record carrying the group and the candidate's launch plan, one builtin
// version with its build log).
#include <cstdint>
#include <vector>

#include "core/build/nvrtc_compiler.h"
#include "core/gen/candidate.h"
#include "core/gen/group_context.h"
#include "core/project/project_store.h"

namespace nova {

struct GeneratedGroup {
  FusionGroup group;
  Candidate candidate;
  NvrtcResult build;  // empty (ok=false, no log) when the generator declined
};

std::vector<GeneratedGroup> generate_and_build(const ModelGraph& graph, const GenerationTarget& target,
                                               const NvrtcCompiler& compiler);

// Stores the groups and their builtin versions; returns the version ids (0 for a declined group).
std::vector<std::int64_t> store_generated(ProjectStore& store, const std::vector<GeneratedGroup>& generated);

}  // namespace nova
