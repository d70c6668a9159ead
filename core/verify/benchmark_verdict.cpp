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

// Two decimals. A ratio under 1 is cut, not rounded, so a slower candidate never reads "1.00x".
std::string ratio(double value) {
  if (value >= 1.0) return fmt::format("{:.2f}x", value);
  std::string digits = fmt::format("{:.6f}", value);
  return digits.substr(0, digits.find('.') + 3) + "x";
}

}  // namespace

std::string to_string(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::ships:
      return "ships";
    case VerdictKind::declined:
      return "declined";
    case VerdictKind::unmeasured:
      return "unmeasured";
  }
  return "unmeasured";
}

VerdictKind verdict_kind_from_string(const std::string& text) {
  if (text == "ships") return VerdictKind::ships;
  if (text == "declined") return VerdictKind::declined;
  if (text == "unmeasured") return VerdictKind::unmeasured;
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
  std::string figures = fmt::format("cold {}, wall {}", ratio(*v.cold_vs_eager), ratio(*v.wall_vs_eager));
  if (*v.cold_vs_eager >= 1.0 && *v.wall_vs_eager >= 1.0) {
    v.kind = VerdictKind::ships;
    v.sentence = fmt::format("ships: not slower than eager ({})", figures);
  } else {
    v.kind = VerdictKind::declined;
    v.sentence = fmt::format("declined: slower than eager ({}); eager is kept for this group", figures);
  }
  return v;
}

void to_json(json& j, const BenchmarkVerdict& v) {
  j = {{"kind", to_string(v.kind)},
       {"cold_vs_eager", v.cold_vs_eager ? json(*v.cold_vs_eager) : json(nullptr)},
       {"wall_vs_eager", v.wall_vs_eager ? json(*v.wall_vs_eager) : json(nullptr)},
       {"sentence", v.sentence}};
}

}  // namespace nova
