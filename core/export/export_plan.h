#pragma once
// The plain types of an export (core/export): what the user asks for (ExportOptions), and what the
// package will hold (ExportPlan): per fusion group either the version that ships with its kernels
// and launch plan, or why the group stays PyTorch; the model's graph and source; the selection
// policy's figures for the README. ExportPlanner makes a plan from a project; PackageWriter writes it.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/gen/candidate.h"
#include "core/graph/model_graph.h"
#include "core/select/selection.h"
#include "core/verify/benchmark_result.h"

namespace nova {

struct ExportOptions {
  std::string package_name;               // a Python identifier; empty: nova_<model stem>
  std::string arch_list = "8.0;9.0+PTX";  // TORCH_CUDA_ARCH_LIST of the package's build
};

// One fusion group in the package.
struct ExportGroup {
  int group_id = 0;
  std::string kind;
  // The version that ships (its kernels, as the project stores them); unset: the group runs the
  // client's original PyTorch code, for `reason`.
  std::optional<std::int64_t> version_id;
  std::optional<Candidate> candidate;
  std::string rule;    // the shipped version's origin ("builtin: row_layer_norm", "user edit")
  std::string reason;  // one sentence: why it ships, or why it stays PyTorch
  // The shipped version's stored benchmark (for the README's figures); unset when none.
  std::optional<BenchmarkResult> benchmark;
  bool ships() const { return candidate.has_value(); }
};

struct ExportPlan {
  std::string package_name;
  std::string arch_list;
  std::filesystem::path model_path;
  std::string model_source;  // the client's model file as intake read it (unchanged since)
  ModelGraph graph;
  std::vector<ExportGroup> groups;  // one per group of the graph, in the graph's order
  Selection selection;              // the selection policy over the project (its model figures)
  int shipped() const {
    int n = 0;
    for (const auto& g : groups) n += g.ships();
    return n;
  }
};

}  // namespace nova
