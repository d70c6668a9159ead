#include "core/trace/trace.h"

#include <algorithm>

namespace nova {

bool Trace::in_window(std::uint64_t t) const {
  if (windows.empty()) return true;
  for (auto [w0, w1] : windows)
    if (t >= w0 && t <= w1) return true;
  return false;
}

std::uint64_t Trace::begin_ns() const { return activities.empty() ? 0 : activities.front().start; }

std::uint64_t Trace::end_ns() const {
  std::uint64_t e = 0;
  for (const auto& a : activities) e = std::max(e, a.end);
  return e;
}

const TraceDevice* Trace::device(std::uint32_t id) const {
  for (const auto& d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

std::size_t Trace::kernel_count() const {
  return static_cast<std::size_t>(
      std::count_if(activities.begin(), activities.end(),
                    [](const GpuActivity& a) { return a.kind == ActivityKind::Kernel; }));
}

long Trace::node_of(std::uint32_t correlation) const {
  auto it = std::lower_bound(node_of_correlation.begin(), node_of_correlation.end(), correlation,
                             [](const auto& e, std::uint32_t c) { return e.first < c; });
  return it != node_of_correlation.end() && it->first == correlation ? static_cast<long>(it->second) : -1;
}

}  // namespace nova
