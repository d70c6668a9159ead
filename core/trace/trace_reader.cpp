#include "core/trace/trace_reader.h"

#include <cxxabi.h>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/trace/injection/trace_format.h"

namespace nova {
namespace {

using namespace nova::tracefmt;

constexpr std::uint32_t kCustom0 = 3;  // CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0
constexpr std::uint32_t kKindConcurrentKernel = 10;

const char* copy_kind_name(std::uint8_t k) {
  switch (k) {
    case 1:
      return "HtoD";
    case 2:
      return "DtoH";
    case 3:
      return "HtoA";
    case 4:
      return "AtoH";
    case 5:
      return "AtoA";
    case 6:
      return "AtoD";
    case 7:
      return "DtoA";
    case 8:
      return "DtoD";
    case 9:
      return "HtoH";
    case 10:
      return "PtoP";
    default:
      return "?";
  }
}

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The fields copies and memsets share.
template <typename Record>
GpuActivity transfer(const Record& m, ActivityKind kind) {
  GpuActivity a;
  a.kind = kind;
  a.start = m.start;
  a.end = m.end;
  a.bytes = m.bytes;
  a.device = static_cast<std::uint8_t>(m.device);
  a.stream = m.stream;
  a.correlation = m.correlation;
  a.graph_id = m.graph_id;
  return a;
}

// Activity names deduplicated into Trace::names, from file string ids or literal texts.
class NameTable {
 public:
  explicit NameTable(Trace& t) : trace_(t) {}
  std::uint32_t of_string(std::uint32_t file_id,
                          const std::unordered_map<std::uint32_t, std::string>& strings, bool demangle) {
    auto it = by_file_id_.find(file_id);
    if (it != by_file_id_.end()) return it->second;
    auto s = strings.find(file_id);
    std::string text = s == strings.end() ? fmt::format("<unnamed {}>", file_id) : s->second;
    std::uint32_t idx = of_text(demangle ? TraceReader::demangle(text) : text);
    by_file_id_.emplace(file_id, idx);
    return idx;
  }
  std::uint32_t of_text(const std::string& text) {
    auto [it, fresh] = by_text_.emplace(text, static_cast<std::uint32_t>(trace_.names.size()));
    if (fresh) trace_.names.push_back(text);
    return it->second;
  }

 private:
  Trace& trace_;
  std::unordered_map<std::uint32_t, std::uint32_t> by_file_id_;
  std::unordered_map<std::string, std::uint32_t> by_text_;
};

// Counts the records that fill the big vectors and reserves them, then rewinds: growing a vector of a
// million activities by doubling would briefly hold one and a half copies of it.
void reserve_exactly(std::istream& in, Trace& t) {
  auto start = in.tellg();
  if (start < 0) return;
  std::size_t activities = 0, correlations = 0;
  char rh_bytes[sizeof(RecordHeader)];
  while (in.read(rh_bytes, sizeof rh_bytes)) {
    auto rh = load<RecordHeader>(rh_bytes);
    switch (static_cast<RecordType>(rh.type)) {
      case RecordType::Kernel:
      case RecordType::Memcpy:
      case RecordType::Memset:
        ++activities;
        break;
      case RecordType::ExternalCorrelation:
        ++correlations;
        break;
      default:
        break;
    }
    if (!in.ignore(rh.size)) break;  // through the buffer: seekg would refill it per record
  }
  in.clear();
  in.seekg(start);
  t.activities.reserve(activities);
  t.node_of_correlation.reserve(correlations);
}

}  // namespace

std::string TraceReader::demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

Trace TraceReader::read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open trace {}", path.string()));
  std::vector<char> buffer(1 << 20);
  in.rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  return decode(in, path.string());
}

Trace TraceReader::decode(const std::string& bytes, const std::string& what) {
  std::istringstream in(bytes);
  return decode(in, what);
}

Trace TraceReader::decode(std::istream& in, const std::string& what) {
  Trace t;
  char head[sizeof(FileHeader)];
  if (!in.read(head, sizeof head) || std::memcmp(head, kMagic, sizeof kMagic) != 0)
    throw std::runtime_error(fmt::format("{} is not a .novatrace file (bad magic)", what));
  auto header = load<FileHeader>(head);
  if (header.version > kVersion)
    throw std::runtime_error(fmt::format("{} has trace format version {}; this build reads up to {}", what,
                                         header.version, kVersion));
  t.format_version = header.version;
  t.pid = header.pid;
  t.cupti_version = header.cupti_version;
  t.created_unix_ns = header.created_unix_ns;
  t.created_cupti_ns = header.created_cupti_ns;

  std::unordered_map<std::uint32_t, std::string> strings;
  NameTable names(t);
  // NVTX range starts waiting for their ends, by marker id.
  std::map<std::uint32_t, TraceMarker> open_ranges;
  auto text = [&](std::uint32_t id) {
    auto it = strings.find(id);
    return it == strings.end() ? std::string() : it->second;
  };

  if (header.header_size > sizeof(FileHeader)) in.ignore(header.header_size - sizeof(FileHeader));
  reserve_exactly(in, t);
  std::vector<char> payload(256);
  while (true) {
    char rh_bytes[sizeof(RecordHeader)];
    in.read(rh_bytes, sizeof rh_bytes);
    if (in.gcount() == 0) break;
    if (in.gcount() < static_cast<std::streamsize>(sizeof rh_bytes)) {
      t.warnings.push_back(
          fmt::format("{} ends inside a record header: the tracer did not finish writing", what));
      break;
    }
    auto rh = load<RecordHeader>(rh_bytes);
    if (payload.size() < rh.size) payload.resize(rh.size);
    in.read(payload.data(), rh.size);
    if (in.gcount() < static_cast<std::streamsize>(rh.size)) {
      t.warnings.push_back(fmt::format("{} ends inside a record: the tracer did not finish writing", what));
      break;
    }
    const char* p = payload.data();
    // Older readers skip types they do not know; a record shorter than its struct is malformed.
    auto fits = [&](std::size_t need) { return rh.size >= need; };
    switch (static_cast<RecordType>(rh.type)) {
      case RecordType::String: {
        if (!fits(sizeof(StringRecord))) break;
        auto s = load<StringRecord>(p);
        if (sizeof(StringRecord) + s.length <= rh.size) strings[s.id] = std::string(p + sizeof s, s.length);
        break;
      }
      case RecordType::Device: {
        if (!fits(sizeof(DeviceRecord))) break;
        auto d = load<DeviceRecord>(p);
        TraceDevice dev;
        dev.id = d.id;
        dev.name = text(d.name);
        dev.sm_count = static_cast<int>(d.sm_count);
        dev.cc_major = static_cast<int>(d.cc_major);
        dev.cc_minor = static_cast<int>(d.cc_minor);
        dev.core_clock_khz = static_cast<int>(d.core_clock_khz);
        dev.memory_bandwidth_bytes_per_s = static_cast<double>(d.global_memory_bandwidth_kbps) * 1000.0;
        dev.memory_bytes = d.global_memory_bytes;
        dev.l2_bytes = d.l2_bytes;
        if (!t.device(dev.id)) t.devices.push_back(dev);
        break;
      }
      case RecordType::Kernel: {
        if (!fits(sizeof(KernelRecord))) break;
        auto k = load<KernelRecord>(p);
        GpuActivity a;
        a.kind = ActivityKind::Kernel;
        a.start = k.start;
        a.end = k.end;
        a.name = names.of_string(k.name, strings, true);
        a.device = static_cast<std::uint8_t>(k.device);
        a.stream = k.stream;
        a.correlation = k.correlation;
        a.graph_id = k.graph_id;
        std::copy(std::begin(k.grid), std::end(k.grid), a.grid);
        for (int i = 0; i < 3; ++i) a.block[i] = static_cast<std::uint16_t>(k.block[i]);
        a.registers = k.registers_per_thread;
        a.shared = {k.static_shared_bytes, k.dynamic_shared_bytes};
        t.activities.push_back(a);
        break;
      }
      case RecordType::Memcpy: {
        if (!fits(sizeof(MemcpyRecord))) break;
        auto m = load<MemcpyRecord>(p);
        GpuActivity a = transfer(m, ActivityKind::Memcpy);
        a.copy_kind = m.copy_kind;
        a.name = names.of_text(fmt::format("Memcpy {}", copy_kind_name(m.copy_kind)));
        t.activities.push_back(a);
        break;
      }
      case RecordType::Memset: {
        if (!fits(sizeof(MemsetRecord))) break;
        GpuActivity a = transfer(load<MemsetRecord>(p), ActivityKind::Memset);
        a.name = names.of_text("Memset");
        t.activities.push_back(a);
        break;
      }
      case RecordType::ExternalCorrelation: {
        if (!fits(sizeof(ExternalCorrelationRecord))) break;
        auto e = load<ExternalCorrelationRecord>(p);
        if (e.external_kind == kCustom0) t.node_of_correlation.emplace_back(e.correlation, e.external_id);
        break;
      }
      case RecordType::Marker: {
        if (!fits(sizeof(MarkerRecord))) break;
        auto m = load<MarkerRecord>(p);
        if (m.flags & 2u) {  // range start
          open_ranges[m.id] = TraceMarker{text(m.name), text(m.domain), m.timestamp, m.timestamp, m.thread};
        } else if (m.flags & 4u) {  // range end
          auto it = open_ranges.find(m.id);
          if (it != open_ranges.end()) {
            it->second.end = m.timestamp;
            t.markers.push_back(std::move(it->second));
            open_ranges.erase(it);
          }
        } else {
          t.markers.push_back(TraceMarker{text(m.name), text(m.domain), m.timestamp, m.timestamp, m.thread});
        }
        break;
      }
      case RecordType::Overhead: {
        if (!fits(sizeof(OverheadRecord))) break;
        auto o = load<OverheadRecord>(p);
        t.overheads.push_back(HostSpan{o.start, o.end, 0, o.overhead_kind, o.thread_or_device, 0});
        break;
      }
      case RecordType::Api: {
        if (!fits(sizeof(ApiRecord))) break;
        auto a = load<ApiRecord>(p);
        t.api_calls.push_back(
            HostSpan{a.start, a.end, a.correlation, a.cbid, a.thread, static_cast<std::uint8_t>(a.api_kind)});
        break;
      }
      case RecordType::Synchronization: {
        if (!fits(sizeof(SynchronizationRecord))) break;
        auto s = load<SynchronizationRecord>(p);
        t.synchronizations.push_back(HostSpan{s.start, s.end, s.correlation, s.sync_type, s.stream, 0});
        break;
      }
      case RecordType::Window: {
        if (!fits(sizeof(WindowRecord))) break;
        auto w = load<WindowRecord>(p);
        t.windows.emplace_back(w.start, w.end);
        break;
      }
      case RecordType::Iteration: {
        if (!fits(sizeof(IterationRecord))) break;
        auto it = load<IterationRecord>(p);
        t.iterations.emplace_back(it.timestamp, it.index);
        break;
      }
      case RecordType::Stats: {
        if (!fits(sizeof(StatsRecord))) break;
        auto s = load<StatsRecord>(p);
        t.stats.present = true;
        t.stats.dropped_records = s.dropped_records;
        t.stats.buffers_completed = s.buffers_completed;
        t.stats.records_written = s.records_written;
        t.stats.unknown_records = s.unknown_records;
        t.stats.markers_seen = s.markers_seen;
        t.stats.pushes = s.pushes;
        t.stats.enabled_kinds = s.enabled_kinds;
        t.stats.cupti_initialized = s.flags & 1u;
        t.stats.stopped_cleanly = s.flags & 2u;
        t.stats.attribution_mode = s.attribution;
        break;
      }
      case RecordType::Identity: {
        const auto j = nlohmann::json::parse(std::string(p, rh.size), nullptr, false);
        if (!j.is_object()) {
          t.warnings.push_back(fmt::format("{} has an identity record that is not JSON", what));
          break;
        }
        t.identity.model_name = j.value("model_name", "");
        t.identity.model_hash = j.value("model_hash", "");
        t.identity.graph_hash = j.value("graph_hash", "");
        break;
      }
      default:
        break;
    }
  }
  for (auto& [id, m] : open_ranges) t.markers.push_back(std::move(m));  // never closed: an instant

  // In place (no merge buffer the size of half the trace), with ties broken so the order is the same
  // on every read.
  auto earlier = [](const GpuActivity& a, const GpuActivity& b) {
    return std::tie(a.start, a.end, a.correlation) < std::tie(b.start, b.end, b.correlation);
  };
  if (!std::is_sorted(t.activities.begin(), t.activities.end(), earlier))
    std::sort(t.activities.begin(), t.activities.end(), earlier);
  std::sort(t.markers.begin(), t.markers.end(),
            [](const TraceMarker& a, const TraceMarker& b) { return a.start < b.start; });
  std::sort(t.iterations.begin(), t.iterations.end());
  // One entry per correlation id; where both attribution routes reported one, they agree.
  std::sort(t.node_of_correlation.begin(), t.node_of_correlation.end());
  t.node_of_correlation.erase(std::unique(t.node_of_correlation.begin(), t.node_of_correlation.end(),
                                          [](const auto& a, const auto& b) { return a.first == b.first; }),
                              t.node_of_correlation.end());

  if (!t.stats.present)
    t.warnings.push_back(fmt::format("{} has no statistics record: the tracer never flushed", what));
  else if (!t.stats.cupti_initialized)
    t.warnings.push_back(fmt::format("{}: CUPTI could not be initialised in the traced process", what));
  if (t.stats.dropped_records)
    t.warnings.push_back(
        fmt::format("CUPTI dropped {} activity records: GPU time is undercounted", t.stats.dropped_records));
  if (t.stats.present && t.stats.cupti_initialized &&
      !(t.stats.enabled_kinds & (1ull << kKindConcurrentKernel)))
    t.warnings.push_back("kernel records were not enabled in the traced process");
  return t;
}

}  // namespace nova
