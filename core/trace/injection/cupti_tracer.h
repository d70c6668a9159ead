#pragma once
// The CUPTI side of libnova_tracer.so: registers activity buffers, enables the activity kinds
// attribution needs (runtime/driver API records only on request: they cost most of the overhead),
// converts each completed buffer into .novatrace records and counts what CUPTI dropped. One
// instance per process, reached through the C functions in tracer_exports.cpp.
//
// Environment: NOVA_TRACE_OUT (the file; nothing is written without it), NOVA_TRACE_AUTOSTART
// (default 1: record from initialisation; 0: wait for nova_tracer_start()), NOVA_TRACE_API
// ("runtime", "driver" or "runtime,driver": add API records), NOVA_TRACE_BUFFER_MB (default 4),
// NVTX_INJECTION64_PATH (set to our libcupti where unset), NOVA_TRACE_ATTRIBUTION:
//   "callback" (default): callbacks on the runtime and driver calls that launch work, copy or set
//                         memory map each call's correlation id to the node on top of the calling
//                         thread's push/pop stack; needs no API activity records.
//   "external": cuptiActivityPushExternalCorrelationId (CUSTOM0); CUPTI ties these records to API
//               activity records, so it may need NOVA_TRACE_API=driver to produce any.
//   "both".
//   "sequence": the traced iterations run the model itself, uninstrumented. Before them, one
//               calibration call of the instrumented export (nova_tracer_calibrate) records which
//               node launched each kernel, copy and memset, in order, with the kernel's name. In
//               each traced iteration (nova_tracer_iteration resets the cursor) every launch is
//               matched by name to the next entry of that sequence (skipping ahead a few entries
//               where the two differ), and its correlation id mapped to the entry's node. Only
//               the launch callbacks run while recording: no per-node calls at all.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/trace/injection/trace_file_writer.h"

namespace nova::tracer {

class CuptiTracer {
 public:
  static CuptiTracer& instance();

  // Idempotent. False where CUPTI could not be set up (the file then says so in its Stats).
  bool initialize();
  bool initialized() const { return initialized_; }

  void start();
  void stop();
  // Forces CUPTI to hand back every buffer, then writes the cumulative Stats record.
  void flush();
  // At exit: stop, flush, close the file.
  void finish();

  void push_node(std::uint64_t node_id);
  void pop_node();
  void iteration(std::uint64_t index);
  // Sequence attribution: on, launch callbacks record (node, kernel name) for each launch made
  // inside a pushed node, replacing any earlier sequence; off, the sequence is kept for matching.
  void calibrate(bool on);
  struct SequenceStats {
    std::uint64_t length = 0;     // launches in the calibrated sequence
    std::uint64_t matched = 0;    // traced launches matched to the next entry
    std::uint64_t resynced = 0;   // matched after skipping entries
    std::uint64_t unmatched = 0;  // traced launches with no entry (left unattributed)
  };
  SequenceStats sequence_stats();

  std::uint64_t dropped() const { return dropped_.load(); }

  // CUPTI buffer callbacks (static trampolines call these).
  void buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
  void buffer_completed(void* context, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                        std::size_t valid);
  // Launch callbacks (runtime or driver API), on entry: the node of the outermost launch call of
  // this thread (kNoNode: none), then the correlation id of each nested call mapped to it.
  static constexpr std::uint64_t kNoNode = ~0ull;
  std::uint64_t launch_node(const char* key);
  void driver_call(std::uint32_t correlation, std::uint64_t node);

 private:
  CuptiTracer() = default;
  void convert(const void* record);  // one CUPTI record; caller holds mutex_
  void write_stats_locked();
  void write_launch_map_locked();
  std::uint64_t set_kinds(bool enable);  // the kinds it enabled, as a bitmask
  void set_launch_callbacks(bool enable);

  std::mutex mutex_;
  tracefmt::TraceFileWriter writer_;
  bool initialized_ = false;
  bool init_attempted_ = false;
  bool finished_ = false;
  std::atomic<bool> running_{false};
  bool api_runtime_ = false, api_driver_ = false;
  std::size_t buffer_bytes_ = 4u << 20;
  std::uint64_t window_start_ = 0;
  std::uint64_t enabled_kinds_ = 0;
  bool stop_flushed_ = false;
  bool devices_written_ = false;  // a Device record went out (from CUPTI, or the driver at flush)
  std::atomic<std::uint64_t> dropped_{0};
  std::uint64_t buffers_ = 0, unknown_ = 0, markers_ = 0;
  std::atomic<std::uint64_t> pushes_{0};
  bool use_callbacks_ = true, use_external_ = false;
  void* subscriber_ = nullptr;                         // CUpti_SubscriberHandle
  std::vector<std::pair<int, int>> launch_callbacks_;  // (domain, cbid) of the GPU-work calls
  std::mutex launch_mutex_;
  std::vector<tracefmt::ExternalCorrelationRecord> launches_;  // from driver_call(), written at flush
  // Sequence attribution (guarded by launch_mutex_).
  bool use_sequence_ = false;
  std::atomic<bool> calibrating_{false};
  struct SequenceEntry {
    std::uint64_t node;
    std::string key;  // kernel name, or the API function for copies and memsets
  };
  std::vector<SequenceEntry> sequence_;
  std::size_t cursor_ = 0;
  SequenceStats sequence_stats_;
};

}  // namespace nova::tracer
