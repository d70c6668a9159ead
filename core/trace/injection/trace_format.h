#pragma once
// The .novatrace file: what libnova_tracer.so writes and core/trace/trace_reader.cpp reads. It is
// the format of the recorded fixtures in tests/fixtures/traces/, so it only ever grows: new record
// types get new numbers, existing records keep their layout, and readers skip types they do not
// know (every record carries its payload size).
//
//   file   := FileHeader record*
//   record := RecordHeader payload[RecordHeader.size]
//
// All integers little-endian; payload structs are packed (no padding); times are CUPTI
// timestamps in nanoseconds. Strings (kernel names, device names, marker names) are interned in
// String records that precede their first use. Plain data only: no CUPTI or core types here.
#include <cstdint>

namespace nova::tracefmt {

inline constexpr char kMagic[8] = {'N', 'O', 'V', 'A', 'T', 'R', 'C', '\0'};
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::uint32_t kNoNode = 0xffffffffu;

#pragma pack(push, 1)
struct FileHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_size;  // sizeof(FileHeader) of the writer: lets later versions grow it
  std::uint32_t pid;
  std::uint32_t cupti_version;
  std::uint64_t created_unix_ns;   // wall clock when the tracer started
  std::uint64_t created_cupti_ns;  // cuptiGetTimestamp() at the same moment
};

enum class RecordType : std::uint16_t {
  String = 1,
  Device = 2,
  Kernel = 3,
  Memcpy = 4,
  Memset = 5,
  ExternalCorrelation = 6,
  Marker = 7,
  Overhead = 8,
  Api = 9,
  Synchronization = 10,
  Window = 11,     // a nova_tracer_start() .. nova_tracer_stop() span
  Iteration = 12,  // nova_tracer_iteration(i): the host time an iteration began
  Stats = 13,      // cumulative counters, rewritten at every flush: the last one wins
  Identity = 14,   // JSON text: the model file and graph the trace was recorded from (TraceIdentity),
                   // appended by the profile runner after the traced process ended
};

struct RecordHeader {
  std::uint16_t type;
  std::uint16_t reserved;
  std::uint32_t size;  // payload bytes that follow
};

// Followed by `length` bytes of text (no terminator).
struct StringRecord {
  std::uint32_t id;
  std::uint32_t length;
};

struct DeviceRecord {
  std::uint32_t id;
  std::uint32_t name;  // string id
  std::uint32_t sm_count;
  std::uint32_t cc_major, cc_minor;
  std::uint32_t core_clock_khz;
  std::uint64_t global_memory_bandwidth_kbps;  // as CUPTI reports it (KB/s)
  std::uint64_t global_memory_bytes;
  std::uint32_t l2_bytes;
  std::uint32_t reserved;
};

struct KernelRecord {
  std::uint64_t start, end;
  std::uint32_t name;  // string id (mangled as CUPTI reports it)
  std::uint32_t device, context, stream;
  std::uint32_t correlation;
  std::int32_t grid[3];
  std::int32_t block[3];
  std::uint16_t registers_per_thread;
  std::uint16_t reserved;
  std::int32_t static_shared_bytes;
  std::int32_t dynamic_shared_bytes;
  std::uint32_t graph_id;  // CUDA graph the launch belonged to (0 if none)
  std::uint32_t reserved2;
};

// copy_kind: CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, ...).
struct MemcpyRecord {
  std::uint64_t start, end;
  std::uint64_t bytes;
  std::uint32_t device, context, stream;
  std::uint32_t correlation;
  std::uint8_t copy_kind, src_kind, dst_kind, reserved;
  std::uint32_t graph_id;
};

struct MemsetRecord {
  std::uint64_t start, end;
  std::uint64_t bytes;
  std::uint32_t device, context, stream;
  std::uint32_t correlation;
  std::uint32_t value;
  std::uint32_t graph_id;
};

// external_kind: CUpti_ExternalCorrelationKind; graph node ids are CUSTOM0 (3), whether they came from
// CUPTI's external correlation records or from the tracer's own driver-API launch callbacks.
struct ExternalCorrelationRecord {
  std::uint64_t external_id;
  std::uint32_t correlation;
  std::uint32_t external_kind;
};

// flags: CUpti_ActivityFlag marker bits (1 instantaneous, 2 start, 4 end).
struct MarkerRecord {
  std::uint64_t timestamp;
  std::uint32_t id;
  std::uint32_t flags;
  std::uint32_t name;  // string id (0: none, as on range ends)
  std::uint32_t domain;
  std::uint32_t thread;
  std::uint32_t reserved;
};

// overhead_kind: CUpti_ActivityOverheadKind.
struct OverheadRecord {
  std::uint64_t start, end;
  std::uint32_t overhead_kind;
  std::uint32_t object_kind;
  std::uint32_t thread_or_device;
  std::uint32_t reserved;
};

// api_kind: 0 runtime, 1 driver. cbid: CUPTI callback id of the function.
struct ApiRecord {
  std::uint64_t start, end;
  std::uint32_t correlation;
  std::uint32_t cbid;
  std::uint32_t thread;
  std::uint32_t api_kind;
};

// sync_type: CUpti_ActivitySynchronizationType.
struct SynchronizationRecord {
  std::uint64_t start, end;
  std::uint32_t correlation;
  std::uint32_t sync_type;
  std::uint32_t context, stream;
};

struct WindowRecord {
  std::uint64_t start, end;
};

struct IterationRecord {
  std::uint64_t timestamp;
  std::uint64_t index;
};

struct StatsRecord {
  std::uint64_t dropped_records;    // reported by cuptiActivityGetNumDroppedRecords
  std::uint64_t buffers_completed;  // buffers CUPTI handed back
  std::uint64_t records_written;    // records of every kind written so far
  std::uint64_t unknown_records;    // activity kinds the tracer did not convert
  std::uint64_t markers_seen;       // NVTX marker records that arrived
  std::uint64_t pushes;             // nova_tracer_push_node() calls
  std::uint64_t enabled_kinds;      // bit i: CUpti_ActivityKind i was enabled (kinds < 64)
  std::uint32_t flags;              // bit 0: CUPTI initialised; bit 1: a stop flushed everything
  std::uint32_t attribution;        // how node ids reached the trace: 0 launch callbacks, 1 CUPTI
                                    // external correlation, 2 both,
                                    // 3 launch callbacks matched to a calibrated sequence
};
#pragma pack(pop)

static_assert(sizeof(FileHeader) == 40);
static_assert(sizeof(RecordHeader) == 8);
static_assert(sizeof(KernelRecord) == 80);
static_assert(sizeof(StatsRecord) == 64);

}  // namespace nova::tracefmt
