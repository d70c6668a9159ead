#pragma once
// What a Ray cluster offers Nova's GPU work, asked before a run sends work there (`nova optimize
// --ray`): its GPUs and their kinds, its nodes, and the GPU's architecture and multiprocessors as a
// probe task on one of them saw (the local NVRTC compiles for it). Read through the Ray lane
// (`python -m nova_worker.ray_lane --address A --describe`, resources/python/nova_worker/ray_lane.py).
#include <chrono>
#include <string>
#include <vector>

namespace nova {

struct RayClusterInfo {
  std::string address;
  int gpus = 0;                     // GPUs over the cluster's nodes
  std::vector<std::string> kinds;   // GPU kinds (Ray's accelerator_type), sorted
  int nodes_alive = 0;
  std::string gpu_name, arch;       // from the probe task; empty when it saw no CUDA device
  int sm_count = 0;
  std::string probe_note;           // why the probe saw no device, if it did not
};

class RayCluster {
 public:
  // Throws std::runtime_error with the lane's sentence (an unreachable head, no ray package, several
  // kinds without `gpu_kind`, ...).
  static RayClusterInfo describe(const std::string& python, const std::string& address,
                                 const std::string& gpu_kind = {},
                                 std::chrono::seconds budget = std::chrono::seconds(300));
  // "4 GPU(s) of kind H100 on 2 node(s), sm_90 with 132 SMs (NVIDIA H100 80GB HBM3)"
  static std::string summary(const RayClusterInfo& info);
};

}  // namespace nova
