#pragma once
// The hot-op list: attribution rows (nodes, or fusion groups) ranked by GPU time, ready to send to
// a generator, and the plain-text table `nova profile` prints. The studio's hot-op table model
// wraps the same rows.
#include <string>
#include <vector>

#include "core/trace/attribution.h"

namespace nova {

class HotOpRanking {
 public:
  enum class By { Node, Group };

  // Rows with GPU time, most first (ties: lower id first). The unattributed row comes last where
  // it has time, so the shares add up to 1.
  static std::vector<OpStats> rank(const AttributionResult& result, By by, bool include_unattributed = true);
  // A fixed-width table: rank, share, GPU time per call, calls, kernels, achieved rates, headroom.
  static std::string to_text(const std::vector<OpStats>& rows, std::size_t max_rows = 30);
  // What "headroom" means, for a tooltip or under the table.
  static constexpr const char* kHeadroomMeaning =
      "headroom: GPU time per call over the roofline floor, the larger of bytes / memory bandwidth "
      "and FLOPs / peak FLOP rate (1.0x: at the device's ceiling; 10x: ten times slower than it could be)";
  // Why a row shows "-" for bandwidth, FLOP rate or headroom: `costs_missing` of the attribution
  // when the whole graph lacks costs, else the per-row reasons.
  static std::string dash_meaning(const AttributionResult& result);
};

}  // namespace nova
