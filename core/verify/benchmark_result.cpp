#include "core/verify/benchmark_result.h"

#include <algorithm>

#include <fmt/format.h>

namespace nova {
using nlohmann::json;

const Measurement* BenchmarkResult::find(const std::string& variant, const std::string& mode) const {
  for (const auto& m : measurements)
    if (m.variant == variant && m.mode == mode) return &m;
  return nullptr;
}

std::vector<std::string> BenchmarkResult::modes() const {
  std::vector<std::string> out;
  for (const auto& m : measurements)
    if (std::find(out.begin(), out.end(), m.mode) == out.end()) out.push_back(m.mode);
  return out;
}

std::string BenchmarkResult::l2_flush() const { return method.value("l2_flush", std::string("dirty")); }

std::string BenchmarkResult::cold_flush_sentence() const {
  if (!find("candidate", "cold")) return {};
  double written = method.value("l2_flush_bytes", 0.0) / 1e6;
  if (l2_flush() == "clean")
    return fmt::format(
        "before each cold call {:.1f} MB were written, then {:.1f} MB of another buffer read, so "
        "no line of the call's data was cached and no dirty line was left for it to write back",
        written, method.value("l2_flush_read_bytes", 0.0) / 1e6);
  return fmt::format(
      "before each cold call {:.1f} MB were written, leaving the L2 full of dirty lines that the "
      "call wrote back as it evicted them",
      written);
}

void BenchmarkResult::recompute() {
  for (auto& m : measurements) m.summary = SampleSummary::of(m.samples);
  speedups.clear();
  copy_shares.clear();
  std::erase_if(flags, [](const std::string& f) { return f.find(": review") != std::string::npos; });
  // What the worker's copy reference moved; absent in results from before it, or when turned off.
  const json* copy_reference = method.contains("copy_reference") && method["copy_reference"].is_object()
                                   ? &method["copy_reference"]
                                   : nullptr;
  for (const auto& mode : modes()) {
    const Measurement* c = find("candidate", mode);
    if (!c || c->summary.n == 0 || c->summary.median <= 0) continue;
    for (const auto& m : measurements) {
      if (m.mode != mode || m.variant == "candidate" || m.variant == kCopyReference || m.summary.n == 0)
        continue;
      double value = m.summary.median / c->summary.median;
      speedups.push_back({mode, m.variant, value});
      if (value > kReviewSpeedup)
        flags.push_back(fmt::format("speedup {:.1f}x over {} ({}) is above {:g}x: review", value, m.variant,
                                    mode, kReviewSpeedup));
    }
    const Measurement* copy = find(kCopyReference, mode);
    if (copy && copy->summary.n > 0 && copy_reference)
      copy_shares.push_back(
          {mode, copy_reference->value("copy_bytes", 0.0), copy->summary.median, c->summary.median});
  }
  for (const auto& m : measurements) {
    // The reference's cold time over its wall time says nothing about the candidate's figures.
    if (m.mode != "cold" || m.summary.n == 0 || m.variant == kCopyReference) continue;
    const Measurement* w = find(m.variant, "wall");
    if (w && w->summary.n > 0 && m.summary.median > kReviewColdOverWall * w->summary.median)
      flags.push_back(
          fmt::format("{}: cold GPU time ({:.1f} us) above its wall time per call ({:.1f} us): launch gaps "
                      "while the host queued the call, or a large gain from a warm L2; compare wall times: "
                      "review",
                      m.variant, m.summary.median, w->summary.median));
  }
  verdict = judge_against_eager(*this);
}

void to_json(json& j, const Measurement& m) {
  j = {{"variant", m.variant}, {"mode", m.mode}, {"metric", m.metric}, {"samples", m.samples}};
  json s = m.summary;
  j.update(s);
}
void from_json(const json& j, Measurement& m) {
  m.variant = j.value("variant", "");
  m.mode = j.value("mode", "");
  m.metric = j.value("metric", m.mode == "wall" ? "wall_us" : "gpu_us");
  m.samples = j.value("samples", std::vector<double>{});
  m.summary = SampleSummary::of(m.samples);
}

void to_json(json& j, const CopyShare& s) {
  j = {{"mode", s.mode},       {"bytes", s.bytes},
       {"copy_us", s.copy_us}, {"candidate_us", s.candidate_us},
       {"share", s.share()},   {"copy_tb_per_s", s.copy_tb_per_s()}};
}

void to_json(json& j, const Speedup& s) {
  j = {{"mode", s.mode}, {"baseline", s.baseline}, {"value", s.value}};
}
void from_json(const json& j, Speedup& s) {
  s.mode = j.value("mode", "");
  s.baseline = j.value("baseline", "");
  s.value = j.value("value", 0.0);
}

void to_json(json& j, const BenchmarkResult& r) {
  j = {{"candidate", r.candidate},
       {"path", r.path},
       {"measurements", r.measurements},
       {"speedups", r.speedups},
       {"copy_shares", r.copy_shares},
       {"flags", r.flags},
       {"verdict", r.verdict},
       {"verification", r.verification},
       {"energy", r.energy},
       {"errors", r.errors},
       {"environment", r.environment},
       {"method", r.method},
       {"elapsed_s", r.elapsed_s}};
}
void from_json(const json& j, BenchmarkResult& r) {
  r.candidate = j.value("candidate", "");
  r.path = j.value("path", "");
  r.measurements = j.value("measurements", std::vector<Measurement>{});
  r.flags = j.value("flags", std::vector<std::string>{});
  r.verification = j.value("verification", json::array());
  r.energy = j.value("energy", json::object());
  r.errors = j.value("errors", json::object());
  r.environment = j.value("environment", json::object());
  r.method = j.value("method", json::object());
  r.elapsed_s = j.value("elapsed_s", 0.0);
  r.recompute();
}

}  // namespace nova
