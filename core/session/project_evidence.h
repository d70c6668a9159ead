#pragma once
// Reads what the selection policy needs out of a project: for each fusion group of the model's
// current graph, its stored versions with their latest validation and benchmark results as typed
// values (ValidationResult, BenchmarkResult: verdicts are recomputed from the raw samples on reading),
// and whether the generator declined it. Results stored before a field existed read as they were made.
#include <map>
#include <optional>
#include <vector>

#include "core/graph/model_graph.h"
#include "core/project/project_store.h"
#include "core/select/selection.h"

namespace nova {

class ProjectEvidence {
 public:
  // `gpu_shares`: each group's share of the model's GPU time from a profile, by graph group id.
  static std::vector<GroupEvidence> read(const ProjectStore& store, const ModelGraph& graph,
                                         const std::map<int, double>& gpu_shares = {});
  // The version's latest validation / benchmark result; nullopt when it has none.
  static std::optional<ValidationResult> latest_validation(const ProjectStore& store, std::int64_t version);
  static std::optional<BenchmarkResult> latest_benchmark(const ProjectStore& store, std::int64_t version);
};

}  // namespace nova
