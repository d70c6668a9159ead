#pragma once
// Attribution: which graph node launched each GPU activity (through the external correlation ids
// the worker pushed, which are node ids), and per node and per fusion group the GPU time, share,
// calls, launches, kernels, achieved bandwidth and FLOP rate, the roofline floor and the headroom.
// Read by HotOpRanking, the timeline (op row, colours) and the graph view (share per node).
#include <cstdint>
#include <string>
#include <vector>

#include "core/graph/model_graph.h"
#include "core/trace/trace.h"

namespace nova {

// The device's ceilings the roofline floor is measured against. Defaults: H200 fp32 as measured
// in BENCHMARKING.md (device-to-device copy 4.25 TB/s, SGEMM 50.7 TFLOP/s).
struct DeviceCeilings {
  double bytes_per_s = 4.25e12;
  double flops_per_s = 50.7e12;
};

// One row of the attribution: a graph node, a fusion group, or everything outside the graph.
struct OpStats {
  enum class Level { Node, Group, Unattributed };
  Level level = Level::Node;
  int id = -1;                  // node id or group id (-1 for Unattributed)
  std::string name;             // "convolution" / "conv+epilogue #0: convolution, minimum, add, mul"
  std::string op_class;         // node's op class, group's kind
  std::vector<int> nodes;       // member node ids (a node: itself)
  double gpu_ns = 0;            // total over the traced iterations
  double share = 0;             // of all GPU time in the trace
  int calls = 0;                // executions: traced iterations, or op spans where no iterations are marked
  int launches = 0;             // distinct launch correlation ids
  int kernels = 0;              // kernel records (copies and memsets not counted)
  double flops = 0, bytes = 0;  // per call, from the graph's cost estimates
  double achieved_bytes_per_s = 0;  // bytes * calls / gpu time (0 where bytes unknown)
  double achieved_flops_per_s = 0;
  double floor_ns = 0;                   // per call: max(bytes / bandwidth, flops / peak)
  double headroom = 0;                   // (gpu time per call) / floor; 0 where the floor is unknown
  std::vector<std::string> top_kernels;  // kernel names by time, most first (at most 5)
};

// A stretch of GPU time in which consecutive activities belong to one node: the op row.
struct OpSpan {
  int node = -1;
  std::uint64_t start = 0, end = 0;
  std::uint32_t first = 0, count = 0;  // Trace::activities [first, first + count)
};

struct AttributionResult {
  std::vector<int> node_of_activity;  // per Trace::activities entry; -1 where unattributed
  std::vector<OpStats> nodes;         // nodes with GPU activity, by node id
  std::vector<OpStats> groups;        // fusion groups with GPU activity, by group id
  OpStats unattributed;               // activity outside any pushed node
  std::vector<OpSpan> spans;          // sorted by start
  double total_gpu_ns = 0;
  double attributed_fraction = 0;  // of GPU time
  int iterations = 0;              // traced iterations marked in the trace (0 if none)
  DeviceCeilings ceilings;
  // Why bandwidth, FLOP rate and headroom are missing from every row (no graph, or a graph without
  // cost estimates); empty when the graph has costs.
  std::string costs_missing;

  const OpStats* node(int id) const;
  const OpStats* group(int id) const;
};

class Attribution {
 public:
  // `graph` may be empty (no intake yet): rows are then named by node id only, without costs.
  static AttributionResult compute(const Trace& trace, const ModelGraph& graph,
                                   const DeviceCeilings& ceilings = {});
};

}  // namespace nova
