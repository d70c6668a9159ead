#pragma once
// A decoded CUPTI trace: plain data that TraceReader fills from a .novatrace file and every later
// stage reads (attribution, hot-op ranking, the timeline model, the Chrome export). Times are CUPTI
// nanoseconds; GPU activities are sorted by start.
#include <cstdint>
#include <string>
#include <vector>

namespace nova {

struct TraceDevice {
  std::uint32_t id = 0;
  std::string name;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  int core_clock_khz = 0;
  double memory_bandwidth_bytes_per_s = 0;  // as the driver reports it (theoretical)
  std::uint64_t memory_bytes = 0;
  std::uint32_t l2_bytes = 0;
};

enum class ActivityKind : std::uint8_t { Kernel, Memcpy, Memset };

// One thing the GPU did: a kernel, a copy or a memset. 64 bytes: a million-kernel trace is 64 MB.
struct GpuActivity {
  struct SharedMemory {
    std::int32_t static_bytes, dynamic_bytes;
  };
  std::uint64_t start = 0, end = 0;
  union {
    std::uint64_t bytes = 0;  // memcpy/memset
    SharedMemory shared;      // kernels
  };
  std::uint32_t name = 0;  // index into Trace::names (kernels: demangled; copies: "Memcpy HtoD")
  std::uint32_t stream = 0, correlation = 0, graph_id = 0;
  std::int32_t grid[3] = {0, 0, 0};
  std::uint16_t block[3] = {0, 0, 0};  // a block has at most 1024 threads
  std::uint16_t registers = 0;
  std::uint8_t device = 0;
  ActivityKind kind = ActivityKind::Kernel;
  std::uint8_t copy_kind = 0;  // CUpti_ActivityMemcpyKind
  std::uint64_t duration() const { return end > start ? end - start : 0; }
};
static_assert(sizeof(GpuActivity) == 64);

// An NVTX range (start..end) or instant (start == end).
struct TraceMarker {
  std::string name, domain;
  std::uint64_t start = 0, end = 0;
  std::uint32_t thread = 0;
};

// A host-side span: a runtime/driver call, a synchronization, a CUPTI overhead.
struct HostSpan {
  std::uint64_t start = 0, end = 0;
  std::uint32_t correlation = 0;
  std::uint32_t kind = 0;  // API: cbid; sync: type; overhead: overhead kind
  std::uint32_t thread = 0;
  std::uint8_t api_kind = 0;  // API only: 0 runtime, 1 driver
};

struct TraceStats {
  bool present = false;  // a Stats record was found (the tracer flushed at least once)
  std::uint64_t dropped_records = 0;
  std::uint64_t buffers_completed = 0;
  std::uint64_t records_written = 0;
  std::uint64_t unknown_records = 0;
  std::uint64_t markers_seen = 0;
  std::uint64_t pushes = 0;
  std::uint64_t enabled_kinds = 0;  // bit i: CUpti_ActivityKind i
  bool cupti_initialized = false;
  bool stopped_cleanly = false;
  std::uint32_t attribution_mode = 0;  // 0 launch callbacks, 1 CUPTI external correlation, 2 both,
                                       // 3 launch callbacks matched to a calibrated sequence
};

// What a trace was recorded from: the model file (its name and a hash of its text) and the graph
// whose node ids the kernels carry (a hash of each node's id and ATen target, so the intake graph
// and the profiling worker's node list of one model hash alike). Empty in traces recorded before
// identities were written.
struct TraceIdentity {
  std::string model_name;  // the model file's name, e.g. "mlp_block.py"
  std::string model_hash;  // FNV-1a 64 of the model file's text, 16 hex digits
  std::string graph_hash;  // FNV-1a 64 of the graph's "id:target;" sequence, 16 hex digits
  bool present() const { return !graph_hash.empty(); }
};

struct Trace {
  std::uint32_t format_version = 0;
  std::uint32_t pid = 0;
  std::uint32_t cupti_version = 0;
  std::uint64_t created_unix_ns = 0, created_cupti_ns = 0;

  std::vector<TraceDevice> devices;
  std::vector<std::string> names;  // activity names, deduplicated
  std::vector<GpuActivity> activities;
  // (correlation id, graph node id) from CUSTOM0 external correlation records, sorted by
  // correlation id: a flat table costs a third of a hash map's memory at a million launches.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> node_of_correlation;
  std::vector<TraceMarker> markers;
  std::vector<HostSpan> api_calls, synchronizations, overheads;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;     // start/stop spans
  std::vector<std::pair<std::uint64_t, std::uint64_t>> iterations;  // (host time, index)
  TraceStats stats;
  TraceIdentity identity;
  std::vector<std::string> warnings;  // plain sentences: dropped records, truncated file, ...

  std::uint64_t begin_ns() const;  // earliest activity start (0 if none)
  std::uint64_t end_ns() const;    // latest activity end
  const TraceDevice* device(std::uint32_t id) const;
  std::size_t kernel_count() const;
  // Whether host or GPU time `t` lies in a traced window (every time does when no window is marked).
  bool in_window(std::uint64_t t) const;
  // The node pushed around the launch with this correlation id, or -1.
  long node_of(std::uint32_t correlation) const;
};

}  // namespace nova
