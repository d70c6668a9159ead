#include "core/trace/gpu_iterations.h"

#include <algorithm>
#include <limits>

namespace nova {

namespace {

// Without launch calls: equal runs of activities by correlation id, one per traced iteration.
std::vector<std::pair<std::uint64_t, std::uint64_t>> by_launch_order(const Trace& trace) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> marks;  // (host time, index), traced ones
  for (const auto& m : trace.iterations)
    if (trace.in_window(m.first)) marks.push_back(m);
  std::sort(marks.begin(), marks.end());
  std::vector<std::pair<std::uint32_t, std::uint64_t>> launched;  // (correlation, GPU start)
  for (const auto& a : trace.activities)
    if (a.correlation != 0 && trace.in_window(a.start)) launched.emplace_back(a.correlation, a.start);
  std::sort(launched.begin(), launched.end());
  if (marks.empty() || launched.empty() || launched.size() % marks.size() != 0) return {};
  const std::size_t run = launched.size() / marks.size();
  // Each run launches the same graph nodes in the same order (where the trace names them).
  for (std::size_t i = run; i < launched.size(); ++i)
    if (trace.node_of(launched[i].first) != trace.node_of(launched[i % run].first)) return {};
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (std::size_t k = 0; k < marks.size(); ++k) {
    // A run's first launch may start after a later one of the run (other streams): its earliest start.
    std::uint64_t start = launched[k * run].second;
    for (std::size_t i = k * run; i < (k + 1) * run; ++i) start = std::min(start, launched[i].second);
    // The run cannot start on the GPU before its iteration began on the host.
    if (start < marks[k].first) return {};
    out.emplace_back(start, marks[k].second);
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::uint64_t, std::uint64_t>> GpuIterations::starts(const Trace& trace) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  if (trace.iterations.empty() || trace.activities.empty()) return out;
  if (trace.api_calls.empty()) return by_launch_order(trace);
  // The earliest GPU start per correlation id, sorted by id.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> gpu;
  gpu.reserve(trace.activities.size());
  for (const auto& a : trace.activities)
    if (a.correlation != 0) gpu.emplace_back(a.correlation, a.start);
  std::sort(gpu.begin(), gpu.end());
  auto gpu_start = [&](std::uint32_t correlation) -> std::uint64_t {
    auto it = std::lower_bound(gpu.begin(), gpu.end(), std::make_pair(correlation, std::uint64_t{0}));
    return it != gpu.end() && it->first == correlation ? it->second : 0;
  };
  // Launch calls by host start.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> calls;
  calls.reserve(trace.api_calls.size());
  for (const auto& c : trace.api_calls)
    if (c.correlation != 0) calls.emplace_back(c.start, c.correlation);
  std::sort(calls.begin(), calls.end());
  auto marks = trace.iterations;  // (host time, index)
  std::sort(marks.begin(), marks.end());
  for (std::size_t m = 0; m < marks.size(); ++m) {
    // The first launch after this mark, and before the next one (an iteration that launched nothing
    // on the GPU has no start).
    const std::uint64_t until = m + 1 < marks.size() ? marks[m + 1].first : std::numeric_limits<std::uint64_t>::max();
    auto it = std::lower_bound(calls.begin(), calls.end(), std::make_pair(marks[m].first, std::uint32_t{0}));
    for (; it != calls.end() && it->first < until; ++it) {
      if (std::uint64_t start = gpu_start(it->second)) {
        out.emplace_back(start, marks[m].second);
        break;
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return out;
}

}  // namespace nova
