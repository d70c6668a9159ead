#include "core/trace/timeline_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace nova {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

TimelineItem TimelineItem::make(std::uint64_t start, std::uint64_t end, std::uint32_t ref, int node,
                                std::uint32_t name, ActivityKind kind) {
  TimelineItem it;
  it.start = start;
  it.duration =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(end > start ? end - start : 0, UINT32_MAX));
  it.ref = ref;
  it.node = node;
  it.name = name;
  it.kind_bits = static_cast<std::uint32_t>(kind);
  return it;
}

TimelineModel::TimelineModel(std::shared_ptr<const Trace> trace, const AttributionResult& attribution,
                             const ModelGraph& graph)
    : trace_(std::move(trace)) {
  const Trace& t = *trace_;
  names_ = t.names;

  // Op row first (pinned above the streams), as Nsight Systems puts NVTX above CUDA rows.
  if (!attribution.spans.empty()) {
    TimelineRow ops;
    ops.kind = TimelineRow::Kind::Ops;
    ops.label = "ops";
    std::map<int, std::uint32_t> label_of_node;
    ops.items.reserve(attribution.spans.size());
    for (std::size_t i = 0; i < attribution.spans.size(); ++i) {
      const auto& s = attribution.spans[i];
      auto [it, fresh] = label_of_node.emplace(s.node, static_cast<std::uint32_t>(names_.size()));
      if (fresh) {
        const GraphNode* n = graph.node(s.node);
        names_.push_back(n ? fmt::format("{} [{}]", n->op, s.node) : fmt::format("node {}", s.node));
      }
      ops.items.push_back(TimelineItem::make(s.start, s.end, static_cast<std::uint32_t>(i), s.node,
                                             it->second, ActivityKind::Kernel));
    }
    add_row(std::move(ops));
  }

  std::map<std::pair<std::uint32_t, std::uint32_t>, TimelineRow> streams;
  {
    // Exact sizes first: a million items must not be grown by doubling.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> counts;
    for (const auto& a : t.activities) ++counts[{a.device, a.stream}];
    for (auto [key, n] : counts) streams[key].items.reserve(n);
  }
  for (std::size_t i = 0; i < t.activities.size(); ++i) {
    const auto& a = t.activities[i];
    auto& row = streams[{a.device, a.stream}];
    int node = i < attribution.node_of_activity.size() ? attribution.node_of_activity[i] : -1;
    row.items.push_back(
        TimelineItem::make(a.start, a.end, static_cast<std::uint32_t>(i), node, a.name, a.kind));
  }
  for (auto& [key, row] : streams) {
    row.kind = TimelineRow::Kind::Stream;
    row.device = key.first;
    row.stream = key.second;
    row.label = fmt::format("GPU {} stream {}", key.first, key.second);
    add_row(std::move(row));
  }

  if (!t.markers.empty()) {
    TimelineRow nvtx;
    nvtx.kind = TimelineRow::Kind::Nvtx;
    nvtx.label = "NVTX";
    for (std::size_t i = 0; i < t.markers.size(); ++i) {
      const auto& m = t.markers[i];
      names_.push_back(m.name);
      nvtx.items.push_back(
          TimelineItem::make(m.start, std::max(m.end, m.start + 1), static_cast<std::uint32_t>(i), -1,
                             static_cast<std::uint32_t>(names_.size() - 1), ActivityKind::Kernel));
    }
    add_row(std::move(nvtx));
  }
}

void TimelineModel::add_row(TimelineRow row) {
  auto earlier = [](const TimelineItem& a, const TimelineItem& b) {
    return a.start < b.start || (a.start == b.start && a.ref < b.ref);
  };
  if (!std::is_sorted(row.items.begin(), row.items.end(), earlier))
    std::sort(row.items.begin(), row.items.end(), earlier);
  row.max_end.resize(row.items.size());
  std::uint64_t m = 0;
  for (std::size_t i = 0; i < row.items.size(); ++i) {
    m = std::max(m, row.items[i].end());
    row.max_end[i] = m;
  }
  if (!row.items.empty()) {
    begin_ = have_items_ ? std::min(begin_, row.items.front().start) : row.items.front().start;
    end_ = have_items_ ? std::max(end_, m) : m;
    have_items_ = true;
  }
  rows_.push_back(std::move(row));
}

std::size_t TimelineModel::item_count() const {
  std::size_t n = 0;
  for (const auto& r : rows_) n += r.items.size();
  return n;
}

std::pair<std::size_t, std::size_t> TimelineModel::visible(std::size_t row, std::uint64_t t0,
                                                           std::uint64_t t1) const {
  const auto& r = rows_.at(row);
  // First item whose running end passes t0: nothing before it can reach into the window.
  auto first = std::upper_bound(r.max_end.begin(), r.max_end.end(), t0) - r.max_end.begin();
  auto last = std::lower_bound(r.items.begin() + first, r.items.end(), t1,
                               [](const TimelineItem& it, std::uint64_t t) { return it.start < t; }) -
              r.items.begin();
  return {static_cast<std::size_t>(first), static_cast<std::size_t>(std::max(first, last))};
}

std::vector<PixelItem> TimelineModel::reduce_per_pixel(std::size_t row, std::uint64_t t0, std::uint64_t t1,
                                                       int width) const {
  std::vector<PixelItem> out;
  if (width <= 0 || t1 <= t0) return out;
  const auto& items = rows_.at(row).items;
  auto [i, last] = visible(row, t0, t1);
  const double ns_per_px = static_cast<double>(t1 - t0) / width;
  auto px = [&](std::uint64_t t) {
    double x = (static_cast<double>(t) - static_cast<double>(t0)) / ns_per_px;
    return static_cast<int>(std::clamp(std::floor(x), 0.0, static_cast<double>(width - 1)));
  };
  // First item index in [from, last) starting at or after pixel p's left edge.
  auto first_starting_at_px = [&](std::size_t from, int p) {
    double edge = static_cast<double>(t0) + p * ns_per_px;
    auto t = static_cast<std::uint64_t>(std::ceil(edge));
    return static_cast<std::size_t>(
        std::lower_bound(items.begin() + from, items.begin() + last, t,
                         [](const TimelineItem& it, std::uint64_t v) { return it.start < v; }) -
        items.begin());
  };
  int next_free = 0;  // first pixel not drawn yet
  while (i < last) {
    const auto& it = items[i];
    int x0 = std::max(px(std::max(it.start, t0)), next_free);
    int x1 = px(it.end() > t0 ? std::min(it.end() - 1, t1 - 1) : t0);
    if (x0 >= width || x1 < x0) {
      // Entirely under pixels already drawn: fold it and every item starting before the next free
      // pixel into the previous entry.
      std::size_t j = next_free >= width ? last : std::max(i + 1, first_starting_at_px(i, next_free));
      if (!out.empty()) out.back().count += static_cast<std::uint32_t>(j - i);
      i = j;
      continue;
    }
    if (x1 == x0) {
      std::size_t j = x0 + 1 >= width ? last : std::max(i + 1, first_starting_at_px(i, x0 + 1));
      out.push_back(PixelItem{x0, x0 + 1, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j - i)});
      next_free = x0 + 1;
      i = j;
      continue;
    }
    out.push_back(PixelItem{x0, x1 + 1, static_cast<std::uint32_t>(i), 1});
    next_free = x1 + 1;
    ++i;
  }
  return out;
}

long TimelineModel::item_at(std::size_t row, std::uint64_t t, std::uint64_t slack) const {
  const auto& items = rows_.at(row).items;
  auto [first, last] = visible(row, t > slack ? t - slack : 0, t + slack + 1);
  long best = -1;
  std::uint64_t best_len = UINT64_MAX;
  for (std::size_t i = first; i < last; ++i) {
    const auto& it = items[i];
    if (it.start <= t + slack && it.end() + slack >= t && it.duration < best_len) {
      best = static_cast<long>(i);
      best_len = it.duration;
    }
  }
  return best;
}

std::vector<std::pair<std::size_t, std::size_t>> TimelineModel::find(const std::string& text) const {
  std::vector<std::pair<std::size_t, std::size_t>> hits;
  if (text.empty()) return hits;
  std::string needle = lower(text);
  std::vector<char> match(names_.size());
  for (std::size_t i = 0; i < names_.size(); ++i)
    match[i] = lower(names_[i]).find(needle) != std::string::npos;
  for (std::size_t r = 0; r < rows_.size(); ++r)
    for (std::size_t i = 0; i < rows_[r].items.size(); ++i)
      if (match[rows_[r].items[i].name]) hits.emplace_back(r, i);
  std::sort(hits.begin(), hits.end(), [&](auto& a, auto& b) {
    return rows_[a.first].items[a.second].start < rows_[b.first].items[b.second].start;
  });
  return hits;
}

std::pair<long, long> TimelineModel::first_item_of_node(int node) const {
  std::pair<long, long> best{-1, -1};
  std::uint64_t best_start = UINT64_MAX;
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    if (rows_[r].kind != TimelineRow::Kind::Stream) continue;
    const auto& items = rows_[r].items;
    for (std::size_t i = 0; i < items.size(); ++i)
      if (items[i].node == node && items[i].start < best_start) {
        best = {static_cast<long>(r), static_cast<long>(i)};
        best_start = items[i].start;
        break;
      }
  }
  return best;
}

}  // namespace nova
