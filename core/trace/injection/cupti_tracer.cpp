#include "core/trace/injection/cupti_tracer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include <cuda.h>
#include <cupti.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <dlfcn.h>
#include <unistd.h>

namespace nova::tracer {
namespace {

using namespace nova::tracefmt;

constexpr CUpti_ExternalCorrelationKind kNodeKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

// What attribution and the timeline need; API records are added only on request.
constexpr CUpti_ActivityKind kBaseKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_MARKER,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
};

void log(const char* what, CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  std::fprintf(stderr, "nova_tracer: %s failed: %s\n", what, text ? text : "unknown CUPTI error");
}

std::uint64_t now_ns() {
  std::uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  CuptiTracer::instance().buffer_requested(buffer, size, max_records);
}

void CUPTIAPI on_buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                                  std::size_t valid) {
  CuptiTracer::instance().buffer_completed(ctx, stream, buffer, size, valid);
}

// The fields copies and memsets share.
template <typename Out, typename In>
Out transfer(const In& m) {
  Out r{};
  r.start = m.start;
  r.end = m.end;
  r.bytes = m.bytes;
  r.device = m.deviceId;
  r.context = m.contextId;
  r.stream = m.streamId;
  r.correlation = m.correlationId;
  r.graph_id = m.graphId;
  return r;
}

void at_exit() { CuptiTracer::instance().finish(); }

// The graph nodes the calling thread is inside (nova_tracer_push_node/pop_node).
thread_local std::vector<std::uint64_t> tls_nodes;
// Launch calls in progress on this thread (a runtime launch makes a driver launch inside it), and
// the node the outermost one was given.
thread_local int tls_launch_depth = 0;
thread_local std::uint64_t tls_launch_node = CuptiTracer::kNoNode;

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  CuptiTracer& tracer = CuptiTracer::instance();
  if (info->callbackSite == CUPTI_API_ENTER) {
    if (tls_launch_depth++ == 0)
      tls_launch_node = tracer.launch_node(info->symbolName ? info->symbolName : info->functionName);
    if (tls_launch_node != CuptiTracer::kNoNode) tracer.driver_call(info->correlationId, tls_launch_node);
  } else if (tls_launch_depth > 0) {
    --tls_launch_depth;
  }
}

std::string env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

// NVTX finds its tool through NVTX_INJECTION64_PATH; point it at the libcupti we run with, unless
// the user chose another, so MARKER records can arrive (set before the first NVTX call).
void point_nvtx_at_cupti() {
  if (std::getenv("NVTX_INJECTION64_PATH")) return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetTimestamp), &info) && info.dli_fname)
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

// Device records straight from the driver already loaded in this process (looked up with dlsym:
// the tracer links no libcuda), for when CUPTI sent no DEVICE record (a context made before the
// tracer started, an in-process start).
template <typename Fn>
Fn driver_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

std::vector<DeviceRecord> devices_from_driver(TraceFileWriter& writer) {
  std::vector<DeviceRecord> out;
  auto get_count = driver_symbol<CUresult (*)(int*)>("cuDeviceGetCount");
  auto get = driver_symbol<CUresult (*)(CUdevice*, int)>("cuDeviceGet");
  auto get_name = driver_symbol<CUresult (*)(char*, int, CUdevice)>("cuDeviceGetName");
  auto get_attr = driver_symbol<CUresult (*)(int*, CUdevice_attribute, CUdevice)>("cuDeviceGetAttribute");
  auto total_mem = driver_symbol<CUresult (*)(std::size_t*, CUdevice)>("cuDeviceTotalMem_v2");
  int count = 0;
  if (!get_count || !get || !get_name || !get_attr || !total_mem || get_count(&count) != CUDA_SUCCESS)
    return out;
  for (int i = 0; i < count; ++i) {
    CUdevice dev{};
    if (get(&dev, i) != CUDA_SUCCESS) continue;
    char name[256] = {};
    get_name(name, sizeof name - 1, dev);
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      get_attr(&v, a, dev);
      return v;
    };
    DeviceRecord r{};
    r.id = static_cast<std::uint32_t>(i);
    r.name = writer.intern(name);
    r.sm_count = static_cast<std::uint32_t>(attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
    r.cc_major = static_cast<std::uint32_t>(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
    r.cc_minor = static_cast<std::uint32_t>(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    r.core_clock_khz = static_cast<std::uint32_t>(attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
    // Double data rate: two transfers per memory clock, bus width in bits; in KB/s as CUPTI reports.
    double bytes_per_s = 2.0 * attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) * 1e3 *
                         attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) / 8.0;
    r.global_memory_bandwidth_kbps = static_cast<std::uint64_t>(bytes_per_s / 1e3);
    std::size_t mem = 0;
    total_mem(&mem, dev);
    r.global_memory_bytes = mem;
    r.l2_bytes = static_cast<std::uint32_t>(attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
    out.push_back(r);
  }
  return out;
}

}  // namespace

CuptiTracer& CuptiTracer::instance() {
  static CuptiTracer* tracer = new CuptiTracer;  // never destroyed: CUPTI may call back during exit
  return *tracer;
}

bool CuptiTracer::initialize() {
  std::lock_guard lock(mutex_);
  if (init_attempted_) return initialized_;
  init_attempted_ = true;
  std::string api = env("NOVA_TRACE_API");
  api_runtime_ = api.find("runtime") != std::string::npos;
  api_driver_ = api.find("driver") != std::string::npos;
  std::string mode = env("NOVA_TRACE_ATTRIBUTION", "callback");
  use_external_ = mode == "external" || mode == "both";
  use_callbacks_ = mode != "external";
  use_sequence_ = mode == "sequence";
  if (int mb = std::atoi(env("NOVA_TRACE_BUFFER_MB", "4").c_str()); mb > 0)
    buffer_bytes_ = static_cast<std::size_t>(mb) << 20;
  std::uint32_t version = 0;
  cuptiGetVersion(&version);
  std::string out = env("NOVA_TRACE_OUT");
  if (out.empty())
    std::fprintf(stderr, "nova_tracer: NOVA_TRACE_OUT is not set: recording nothing to disk\n");
  else if (!writer_.open(out, static_cast<std::uint32_t>(getpid()), version, now_ns()))
    std::fprintf(stderr, "nova_tracer: cannot create %s: %s\n", out.c_str(), std::strerror(errno));

  point_nvtx_at_cupti();
  if (CUptiResult r = cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
      r != CUPTI_SUCCESS) {
    log("cuptiActivityRegisterCallbacks", r);
    write_stats_locked();
    writer_.flush();
    return false;
  }
  if (CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE); r != CUPTI_SUCCESS)
    log("enabling DEVICE records", r);
  if (use_callbacks_) {
    CUpti_SubscriberHandle handle = nullptr;
    if (CUptiResult r = cuptiSubscribe(&handle, on_callback, nullptr); r != CUPTI_SUCCESS) {
      log("cuptiSubscribe (launch callbacks for node attribution)", r);
      use_callbacks_ = false;
    } else {
      subscriber_ = handle;
      // Only the calls that put work on the GPU (launches, graph launches, copies, memsets), in both
      // the runtime and the driver domain: whichever correlation id the activity record carries is
      // then mapped, and the many other API calls of a framework cost nothing.
      for (auto [domain, size] :
           {std::pair{CUPTI_CB_DOMAIN_RUNTIME_API, static_cast<int>(CUPTI_RUNTIME_TRACE_CBID_SIZE)},
            std::pair{CUPTI_CB_DOMAIN_DRIVER_API, static_cast<int>(CUPTI_DRIVER_TRACE_CBID_SIZE)}}) {
        for (int cbid = 1; cbid < size; ++cbid) {
          const char* name = nullptr;
          if (cuptiGetCallbackName(domain, static_cast<CUpti_CallbackId>(cbid), &name) != CUPTI_SUCCESS ||
              !name)
            continue;
          std::string_view n(name);
          if (n.find("Launch") != n.npos || n.find("Memcpy") != n.npos || n.find("Memset") != n.npos)
            launch_callbacks_.emplace_back(static_cast<int>(domain), cbid);
        }
      }
    }
  }
  initialized_ = true;
  std::atexit(at_exit);
  write_stats_locked();
  writer_.flush();
  return true;
}

std::uint64_t CuptiTracer::set_kinds(bool enable) {
  std::vector<CUpti_ActivityKind> kinds(std::begin(kBaseKinds), std::end(kBaseKinds));
  if (api_runtime_) kinds.push_back(CUPTI_ACTIVITY_KIND_RUNTIME);
  if (api_driver_) kinds.push_back(CUPTI_ACTIVITY_KIND_DRIVER);
  std::uint64_t enabled = 0;
  for (auto k : kinds) {
    CUptiResult r = enable ? cuptiActivityEnable(k) : cuptiActivityDisable(k);
    if (r == CUPTI_SUCCESS) {
      if (enable && static_cast<unsigned>(k) < 64) enabled |= 1ull << static_cast<unsigned>(k);
    } else if (enable) {
      // A kind the driver does not offer (MARKER without NVTX, say) is noted, not fatal.
      char what[64];
      std::snprintf(what, sizeof what, "enabling activity kind %d", static_cast<int>(k));
      log(what, r);
    }
  }
  return enabled;
}

void CuptiTracer::set_launch_callbacks(bool enable) {
  if (!subscriber_) return;
  auto handle = static_cast<CUpti_SubscriberHandle>(subscriber_);
  for (auto [domain, cbid] : launch_callbacks_)
    if (CUptiResult r = cuptiEnableCallback(enable ? 1 : 0, handle, static_cast<CUpti_CallbackDomain>(domain),
                                            static_cast<CUpti_CallbackId>(cbid));
        r != CUPTI_SUCCESS && enable) {
      log("cuptiEnableCallback (launch callbacks)", r);
      break;
    }
}

// CUPTI calls are made outside mutex_: a flush hands buffers back on the calling thread, and
// buffer_completed() takes the mutex.
void CuptiTracer::start() {
  if (!initialized_ || running_.exchange(true)) return;
  std::uint64_t begin = now_ns();
  std::uint64_t enabled = set_kinds(true);
  if (!calibrating_) set_launch_callbacks(true);
  std::lock_guard lock(mutex_);
  window_start_ = begin;
  enabled_kinds_ |= enabled;
}

void CuptiTracer::stop() {
  if (!initialized_ || !running_.exchange(false)) return;
  std::uint64_t end = now_ns();
  set_kinds(false);
  if (!calibrating_) set_launch_callbacks(false);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(mutex_);
  write_launch_map_locked();
  writer_.write(RecordType::Window, WindowRecord{window_start_, end});
  stop_flushed_ = true;
}

void CuptiTracer::flush() {
  if (initialized_) {
    if (CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
      log("cuptiActivityFlushAll", r);
  }
  std::lock_guard lock(mutex_);
  if (!devices_written_ && initialized_) {
    for (const auto& d : devices_from_driver(writer_)) writer_.write(RecordType::Device, d);
    devices_written_ = true;  // whether or not the driver answered: asked once
  }
  write_launch_map_locked();
  write_stats_locked();
  writer_.flush();
}

void CuptiTracer::finish() {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
  }
  stop();
  flush();
  std::lock_guard lock(mutex_);
  writer_.close();
}

void CuptiTracer::push_node(std::uint64_t node_id) {
  if (!initialized_) return;
  tls_nodes.push_back(node_id);
  if (use_external_) cuptiActivityPushExternalCorrelationId(kNodeKind, node_id);
  pushes_.fetch_add(1, std::memory_order_relaxed);
}

void CuptiTracer::pop_node() {
  if (!initialized_) return;
  if (!tls_nodes.empty()) tls_nodes.pop_back();
  if (use_external_) {
    std::uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(kNodeKind, &last);
  }
}

std::uint64_t CuptiTracer::launch_node(const char* key) {
  if (!tls_nodes.empty()) {
    std::uint64_t node = tls_nodes.back();
    if (calibrating_.load(std::memory_order_relaxed)) {
      std::lock_guard lock(launch_mutex_);
      sequence_.push_back({node, key ? key : ""});
    }
    return node;
  }
  if (!use_sequence_ || !running_.load(std::memory_order_relaxed)) return kNoNode;
  std::string_view k = key ? key : "";
  constexpr std::size_t kLookahead = 8;  // entries skipped at most to find the launch's name
  std::lock_guard lock(launch_mutex_);
  for (std::size_t i = cursor_; i < sequence_.size() && i < cursor_ + kLookahead; ++i) {
    if (sequence_[i].key != k) continue;
    ++(i == cursor_ ? sequence_stats_.matched : sequence_stats_.resynced);
    cursor_ = i + 1;
    return sequence_[i].node;
  }
  ++sequence_stats_.unmatched;
  return kNoNode;
}

void CuptiTracer::driver_call(std::uint32_t correlation, std::uint64_t node) {
  if (!running_.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(launch_mutex_);
  launches_.push_back(ExternalCorrelationRecord{node, correlation, static_cast<std::uint32_t>(kNodeKind)});
}

void CuptiTracer::calibrate(bool on) {
  if (!initialized_ || !use_callbacks_) return;
  if (on) {
    std::lock_guard lock(launch_mutex_);
    sequence_.clear();
    cursor_ = 0;
  }
  calibrating_ = on;
  if (!running_) set_launch_callbacks(on);
}

CuptiTracer::SequenceStats CuptiTracer::sequence_stats() {
  std::lock_guard lock(launch_mutex_);
  SequenceStats s = sequence_stats_;
  s.length = sequence_.size();
  return s;
}

void CuptiTracer::write_launch_map_locked() {
  std::vector<ExternalCorrelationRecord> batch;
  {
    std::lock_guard lock(launch_mutex_);
    batch.swap(launches_);
  }
  for (const auto& r : batch) writer_.write(RecordType::ExternalCorrelation, r);
}

void CuptiTracer::iteration(std::uint64_t index) {
  if (!initialized_) return;
  {
    std::lock_guard lock(launch_mutex_);
    cursor_ = 0;  // each iteration launches the calibrated sequence from its start
  }
  std::uint64_t t = now_ns();
  std::lock_guard lock(mutex_);
  writer_.write(RecordType::Iteration, IterationRecord{t, index});
}

void CuptiTracer::buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  // CUPTI wants 8-byte alignment.
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, buffer_bytes_));
  *size = *buffer ? buffer_bytes_ : 0;
  *max_records = 0;
}

void CuptiTracer::buffer_completed(void* ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                                   std::size_t valid) {
  (void)size;
  {
    std::lock_guard lock(mutex_);
    ++buffers_;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) convert(record);
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(static_cast<CUcontext>(ctx), stream, &dropped) == CUPTI_SUCCESS &&
        dropped) {
      dropped_ += dropped;
      std::fprintf(stderr, "nova_tracer: CUPTI dropped %zu records (buffer too small or full)\n", dropped);
    }
  }
  std::free(buffer);
}

void CuptiTracer::convert(const void* raw) {
  const auto* base = static_cast<const CUpti_Activity*>(raw);
  switch (base->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = static_cast<const CUpti_ActivityKernel10*>(raw);
      KernelRecord r{};
      r.start = k->start;
      r.end = k->end;
      r.name = writer_.intern(k->name ? k->name : "");
      r.device = k->deviceId;
      r.context = k->contextId;
      r.stream = k->streamId;
      r.correlation = k->correlationId;
      r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
      r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
      r.registers_per_thread = k->registersPerThread;
      r.static_shared_bytes = k->staticSharedMemory;
      r.dynamic_shared_bytes = k->dynamicSharedMemory;
      r.graph_id = k->graphId;
      writer_.write(RecordType::Kernel, r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = static_cast<const CUpti_ActivityMemcpy6*>(raw);
      auto r = transfer<MemcpyRecord>(*m);
      r.copy_kind = m->copyKind;
      r.src_kind = m->srcKind;
      r.dst_kind = m->dstKind;
      writer_.write(RecordType::Memcpy, r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = static_cast<const CUpti_ActivityMemset4*>(raw);
      auto r = transfer<MemsetRecord>(*m);
      r.value = m->value;
      writer_.write(RecordType::Memset, r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* e = static_cast<const CUpti_ActivityExternalCorrelation*>(raw);
      writer_.write(RecordType::ExternalCorrelation,
                    ExternalCorrelationRecord{e->externalId, e->correlationId,
                                              static_cast<std::uint32_t>(e->externalKind)});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = static_cast<const CUpti_ActivityMarker2*>(raw);
      MarkerRecord r{};
      r.timestamp = m->timestamp;
      r.id = m->id;
      r.flags = static_cast<std::uint32_t>(m->flags);
      r.name = writer_.intern(m->name ? m->name : "");
      r.domain = writer_.intern(m->domain ? m->domain : "");
      r.thread = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
      writer_.write(RecordType::Marker, r);
      ++markers_;
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = static_cast<const CUpti_ActivityOverhead3*>(raw);
      OverheadRecord r{};
      r.start = o->start;
      r.end = o->end;
      r.overhead_kind = static_cast<std::uint32_t>(o->overheadKind);
      r.object_kind = static_cast<std::uint32_t>(o->objectKind);
      r.thread_or_device =
          o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o->objectId.pt.threadId : o->objectId.dcs.deviceId;
      writer_.write(RecordType::Overhead, r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = static_cast<const CUpti_ActivityAPI*>(raw);
      writer_.write(RecordType::Api, ApiRecord{a->start, a->end, a->correlationId, a->cbid, a->threadId,
                                               base->kind == CUPTI_ACTIVITY_KIND_DRIVER ? 1u : 0u});
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = static_cast<const CUpti_ActivitySynchronization2*>(raw);
      writer_.write(RecordType::Synchronization,
                    SynchronizationRecord{s->start, s->end, s->correlationId,
                                          static_cast<std::uint32_t>(s->type), s->contextId, s->streamId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = static_cast<const CUpti_ActivityDevice5*>(raw);
      DeviceRecord r{};
      r.id = d->id;
      r.name = writer_.intern(d->name ? d->name : "");
      r.sm_count = d->numMultiprocessors;
      r.cc_major = d->computeCapabilityMajor;
      r.cc_minor = d->computeCapabilityMinor;
      r.core_clock_khz = d->coreClockRate;
      r.global_memory_bandwidth_kbps = d->globalMemoryBandwidth;
      r.global_memory_bytes = d->globalMemorySize;
      r.l2_bytes = d->l2CacheSize;
      writer_.write(RecordType::Device, r);
      devices_written_ = true;
      break;
    }
    default:
      ++unknown_;
      break;
  }
}

void CuptiTracer::write_stats_locked() {
  StatsRecord s{};
  s.dropped_records = dropped_.load();
  s.buffers_completed = buffers_;
  s.records_written = writer_.records_written();
  s.unknown_records = unknown_;
  s.markers_seen = markers_;
  s.pushes = pushes_.load();
  s.enabled_kinds = enabled_kinds_;
  s.flags = (initialized_ ? 1u : 0u) | (stop_flushed_ ? 2u : 0u);
  s.attribution = use_sequence_ ? 3u : use_callbacks_ && use_external_ ? 2u : use_external_ ? 1u : 0u;
  writer_.write(RecordType::Stats, s);
}

}  // namespace nova::tracer
