#pragma once
// Traces built in the tests where no recording exists: a seed-like model (convolution, clone, min,
// add, mul; one conv+epilogue group) whose iterations launch known kernels with known times, written
// through the tracer's own TraceFileWriter so the reader is tested on the real format.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/graph/model_graph.h"
#include "core/trace/attribution.h"
#include "core/trace/injection/trace_file_writer.h"
#include "core/trace/trace_reader.h"

namespace nova::test {

struct SyntheticKernel {
  int node;  // -1: launched outside any node
  const char* name;
  std::uint64_t ns;
};

// Per iteration, on stream 7 of device 0, 1 us apart.
inline const std::vector<SyntheticKernel>& seed_kernels() {
  static const std::vector<SyntheticKernel> k = {
      {0, "_Z23implicit_convolve_sgemmIffLi128ELi5ELi5ELi3ELi3ELi3ELi1ELb0ELb0ELb1EEviiiPKT_iPT0_", 17700},
      {2,
       "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_11MinimumOpsEEEEEviT0_",
       6100},
      {3, "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEEEEviT0_", 12400},
      {4,
       "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIfffNS0_"
       "10MulFunctorIfEEEEEEviT0_",
       3300},
  };
  return k;
}

inline ModelGraph seed_graph() {
  ModelGraph g;
  g.model_path = "conv2d_min_add_multiply.py";
  const char* ops[] = {"convolution", "clone", "minimum", "add", "mul"};
  OpClass classes[] = {OpClass::Convolution, OpClass::DataMovement, OpClass::Elementwise,
                       OpClass::Elementwise, OpClass::Elementwise};
  double flops[] = {113246208, 0, 1843200, 1843200, 1843200};
  double bytes[] = {7971328, 8, 14745600, 14745664, 14745600};
  for (int i = 0; i < 5; ++i) {
    GraphNode n;
    n.id = i;
    n.op = ops[i];
    n.target = std::string("aten.") + ops[i] + ".default";
    n.op_class = classes[i];
    n.flops = flops[i];
    n.bytes = bytes[i];
    g.nodes.push_back(n);
  }
  FusionGroup grp;
  grp.id = 0;
  grp.kind = "conv+epilogue";
  grp.anchor = 0;
  grp.nodes = {0, 2, 3, 4};
  grp.flops = flops[0] + 3 * flops[2];
  grp.bytes = 1572864 + 1728 + 64 + 64 + 7372800;
  g.groups.push_back(grp);
  return g;
}

// Writes `iterations` iterations of seed_kernels() (plus one unattributed host-to-device copy of
// 4 bytes per iteration, NVTX ranges per node when `nvtx`, `dropped` dropped records) to `path`.
inline void write_seed_trace(const std::filesystem::path& path, int iterations, bool nvtx = true,
                             std::uint64_t dropped = 0) {
  using namespace nova::tracefmt;
  TraceFileWriter w;
  w.open(path.string(), 4242, 130000, 1000);
  DeviceRecord d{};
  d.id = 0;
  d.name = w.intern("NVIDIA H200");
  d.sm_count = 132;
  d.cc_major = 9;
  d.core_clock_khz = 1980000;
  d.global_memory_bandwidth_kbps = 4800000000ull;
  d.global_memory_bytes = 150ull << 30;
  d.l2_bytes = 60u << 20;
  w.write(RecordType::Device, d);
  std::uint64_t t = 1'000'000;
  std::uint32_t corr = 1;
  std::uint32_t marker = 1;
  const std::uint64_t window_start = t - 500;
  for (int it = 0; it < iterations; ++it) {
    w.write(RecordType::Iteration, IterationRecord{t - 100, static_cast<std::uint64_t>(it)});
    MemcpyRecord m{};
    m.start = t;
    m.end = t + 2000;
    m.bytes = 4;
    m.stream = 7;
    m.correlation = corr++;
    m.copy_kind = 1;
    w.write(RecordType::Memcpy, m);
    t += 3000;
    for (const auto& k : seed_kernels()) {
      KernelRecord r{};
      r.start = t;
      r.end = t + k.ns;
      r.name = w.intern(k.name);
      r.stream = 7;
      r.correlation = corr;
      r.grid[0] = 512, r.grid[1] = 1, r.grid[2] = 1;
      r.block[0] = 128, r.block[1] = 1, r.block[2] = 1;
      r.registers_per_thread = 32;
      r.static_shared_bytes = 1024;
      w.write(RecordType::Kernel, r);
      if (k.node >= 0) {
        w.write(RecordType::ExternalCorrelation,
                ExternalCorrelationRecord{static_cast<std::uint64_t>(k.node), corr, 3});
        if (nvtx) {
          MarkerRecord s{t - 800, marker, 2, w.intern("node " + std::to_string(k.node)), 0, 1, 0};
          MarkerRecord e{t - 200, marker, 4, 0, 0, 1, 0};
          w.write(RecordType::Marker, s);
          w.write(RecordType::Marker, e);
          ++marker;
        }
      }
      ++corr;
      t += k.ns + 1000;
    }
  }
  w.write(RecordType::Window, WindowRecord{window_start, t});
  StatsRecord s{};
  s.dropped_records = dropped;
  s.buffers_completed = 1;
  s.records_written = w.records_written();
  s.markers_seen = nvtx ? 2 * (marker - 1) : 0;
  s.enabled_kinds = (1ull << 10) | (1ull << 1) | (1ull << 2) | (1ull << 39) | (1ull << 38) | (1ull << 12);
  s.flags = 3;
  w.write(RecordType::Stats, s);
}

// A seed trace written to `dir`, read back and attributed against seed_graph().
struct SeedProfile {
  std::shared_ptr<Trace> trace;
  ModelGraph graph;
  AttributionResult attribution;
};

inline SeedProfile seed_profile(const std::filesystem::path& dir, int iterations) {
  write_seed_trace(dir / "seed.novatrace", iterations);
  SeedProfile p;
  p.trace = std::make_shared<Trace>(TraceReader::read(dir / "seed.novatrace"));
  p.graph = seed_graph();
  p.attribution = Attribution::compute(*p.trace, p.graph);
  return p;
}

}  // namespace nova::test
