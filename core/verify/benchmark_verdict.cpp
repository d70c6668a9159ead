#include "core/verify/benchmark_verdict.h"

#include <stdexcept>

#include <fmt/format.h>

#include "core/verify/benchmark_result.h"

namespace nova {
using nlohmann::json;

namespace {

std::optional<double> eager_speedup(const BenchmarkResult& r, const std::string& mode) {
  for (const auto& s : r.speedups)
    if (s.mode == mode && s.baseline == "eager") return s.value;
  return std::nullopt;
}

std::optional<RatioInterval> eager_interval(const BenchmarkResult& r, const std::string& mode) {
  const Measurement* eager = r.find("eager", mode);
  const Measurement* candidate = r.find("candidate", mode);
  if (!eager || !candidate) return std::nullopt;
  return RatioInterval::of(eager->samples, candidate->samples);
}


}  // namespace

std::string format_ratio(double value) {
  if (value >= 1.0) return fmt::format("{:.2f}x", value);
  std::string digits = fmt::format("{:.6f}", value);
  return digits.substr(0, digits.find('.') + 3) + "x";
}

std::string to_string(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::ships:
      return "ships";
    case VerdictKind::declined:
      return "declined";
    case VerdictKind::unmeasured:
      return "unmeasured";
    case VerdictKind::tie:
      return "tie";
  }
  return "unmeasured";
}

VerdictKind verdict_kind_from_string(const std::string& text) {
  if (text == "ships") return VerdictKind::ships;
  if (text == "declined") return VerdictKind::declined;
  if (text == "unmeasured") return VerdictKind::unmeasured;
  if (text == "tie") return VerdictKind::tie;
  throw std::invalid_argument(fmt::format("unknown benchmark verdict \"{}\"", text));
}

BenchmarkVerdict judge_against_eager(const BenchmarkResult& r) {
  BenchmarkVerdict v;
  v.cold_vs_eager = eager_speedup(r, "cold");
  v.wall_vs_eager = eager_speedup(r, "wall");
  if (!v.cold_vs_eager || !v.wall_vs_eager) {
    std::string missing = !v.cold_vs_eager && !v.wall_vs_eager ? "cold and wall"
                          : !v.cold_vs_eager                   ? "cold"
                                                               : "wall";
    v.sentence = fmt::format(
        "no verdict: the {} medians of the candidate and of eager are missing (bench --mode cold or all, "
        "with eager among the baselines)",
        missing);
    return v;
  }
  v.cold_interval = eager_interval(r, "cold");
  v.wall_interval = eager_interval(r, "wall");
  auto figure = [](double value, const std::optional<RatioInterval>& i) {
    return i ? fmt::format("{} [{}, {}]", format_ratio(value), format_ratio(i->low), format_ratio(i->high)) : format_ratio(value);
  };
  std::string figures = fmt::format("cold {}, wall {}", figure(*v.cold_vs_eager, v.cold_interval),
                                    figure(*v.wall_vs_eager, v.wall_interval));
  const bool have_intervals = v.cold_interval && v.wall_interval;
  if (have_intervals) figures += "; 95% intervals";
  // Slower: beyond the noise where intervals exist, by the median where the samples are missing.
  auto slower = [](double value, const std::optional<RatioInterval>& i) { return i ? i->below_one() : value < 1.0; };
  if (slower(*v.cold_vs_eager, v.cold_interval) || slower(*v.wall_vs_eager, v.wall_interval)) {
    v.kind = VerdictKind::declined;
    v.sentence = fmt::format("declined: slower than eager ({}); eager is kept for this group", figures);
  } else if (have_intervals && v.cold_interval->above_one() && v.wall_interval->above_one()) {
    v.kind = VerdictKind::ships;
    v.sentence = fmt::format("ships: faster than eager beyond the noise ({})", figures);
  } else {
    v.kind = VerdictKind::tie;
    v.sentence = fmt::format("tie: not shown faster than eager ({}{}); a tie is not a win, eager is kept for "
                             "this group",
                             figures, have_intervals ? "" : "; too few raw samples to bound the ratios");
  }
  return v;
}

void to_json(json& j, const BenchmarkVerdict& v) {
  j = {{"kind", to_string(v.kind)},
       {"cold_vs_eager", v.cold_vs_eager ? json(*v.cold_vs_eager) : json(nullptr)},
       {"wall_vs_eager", v.wall_vs_eager ? json(*v.wall_vs_eager) : json(nullptr)},
       {"cold_interval", v.cold_interval ? json(*v.cold_interval) : json(nullptr)},
       {"wall_interval", v.wall_interval ? json(*v.wall_interval) : json(nullptr)},
       {"sentence", v.sentence}};
}

}  // namespace nova
