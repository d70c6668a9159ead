#include "core/select/selection_policy.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace nova {
namespace {
using nlohmann::json;

const std::vector<RatioKey> kKeys{{"cold", "eager"}, {"cold", "compile"}, {"wall", "eager"}, {"wall", "compile"}};

std::optional<double> speedup(const BenchmarkResult& b, const RatioKey& key) {
  for (const auto& s : b.speedups)
    if (s.mode == key.first && s.baseline == key.second) return s.value;
  return std::nullopt;
}

std::optional<double> median(const BenchmarkResult& b, const std::string& variant, const std::string& mode) {
  const Measurement* m = b.find(variant, mode);
  if (!m || m->summary.n == 0 || m->summary.median <= 0) return std::nullopt;
  return m->summary.median;
}

bool passed(const VersionEvidence& v) { return v.validation && v.validation->passed; }

// The GPU a benchmark ran on, as its environment says ("" where it does not).
std::string gpu_of(const BenchmarkResult& b) {
  return b.environment.is_object() && b.environment.contains("gpu") && b.environment["gpu"].is_string()
             ? b.environment["gpu"].get<std::string>()
             : std::string();
}

}  // namespace

std::string to_string(GroupOutcome outcome) {
  switch (outcome) {
    case GroupOutcome::ships:
      return "ships";
    case GroupOutcome::tie:
      return "tie";
    case GroupOutcome::slower:
      return "slower";
    case GroupOutcome::failed:
      return "failed";
    case GroupOutcome::not_generated:
      return "not generated";
    case GroupOutcome::unmeasured:
      return "unmeasured";
  }
  return "unmeasured";
}

namespace {
std::string not_compared(const std::vector<std::string>& versions, const std::string& gpu) {
  return fmt::format("; not compared, benchmarked on another GPU than the {}: {}", gpu, fmt::join(versions, ", "));
}
}  // namespace

GroupSelection SelectionPolicy::select_group(const GroupEvidence& group) {
  GroupSelection s;
  s.group_id = group.group_id;
  s.kind = group.kind;
  s.gpu_share = group.gpu_share;
  const VersionEvidence* best = nullptr;
  std::tuple<double, double> best_score{0, 0};
  bool any_generated = false, any_validated = false, any_passed = false, any_tie = false, any_slower = false;
  std::string last_reason;
  // Where eager is kept, the reason is the best tie's sentence (or the best slower version's): the
  // version closest to shipping, as (cold, wall) against eager.
  std::string tie_reason, slower_reason;
  std::tuple<double, double> tie_score{-1, -1}, slower_score{-1, -1};
  // Times are compared only when measured on one kind of GPU: the group's figures come from the GPU
  // of its newest benchmarked version; versions measured on another are named and left out.
  for (const auto& v : group.versions)
    if (v.benchmark && !gpu_of(*v.benchmark).empty()) s.gpu = gpu_of(*v.benchmark);
  std::vector<std::string> elsewhere;
  auto other_gpu = [&](const VersionEvidence& v) {
    return v.benchmark && !s.gpu.empty() && !gpu_of(*v.benchmark).empty() && gpu_of(*v.benchmark) != s.gpu;
  };
  for (const auto& v : group.versions) {
    if (v.generator_declined) {
      last_reason = "the generator declined: " + *v.generator_declined;
      continue;
    }
    any_generated = true;
    if (other_gpu(v)) {
      elsewhere.push_back(fmt::format("v{} ({})", v.version_id, gpu_of(*v.benchmark)));
      any_validated = any_validated || v.validation.has_value();
      any_passed = any_passed || passed(v);
      continue;
    }
    if (v.benchmark) {
      // Eager's own figures come from any run of the group: the weight and eager vs torch.compile.
      if (!s.eager_cold_us) s.eager_cold_us = median(*v.benchmark, "eager", "cold");
      for (const std::string mode : {"cold", "wall"}) {
        auto e = median(*v.benchmark, "eager", mode), c = median(*v.benchmark, "compile", mode);
        if (e && c && !s.counted.contains({mode, "compile"})) s.counted[{mode, "compile"}] = *c / *e;
      }
    }
    any_validated = any_validated || v.validation.has_value();
    if (!passed(v)) continue;
    any_passed = true;
    if (!v.benchmark) continue;
    const BenchmarkVerdict& verdict = v.benchmark->verdict;
    if (verdict.kind == VerdictKind::tie) any_tie = true;
    if (verdict.kind == VerdictKind::declined) any_slower = true;
    std::tuple<double, double> score{verdict.cold_vs_eager.value_or(0), verdict.wall_vs_eager.value_or(0)};
    if (!verdict.ships()) {
      last_reason = verdict.sentence;
      if (verdict.kind == VerdictKind::tie && score > tie_score) tie_score = score, tie_reason = verdict.sentence;
      if (verdict.kind == VerdictKind::declined && score > slower_score)
        slower_score = score, slower_reason = verdict.sentence;
      continue;
    }
    if (!best || score > best_score) {
      best = &v;
      best_score = score;
    }
  }
  if (best) {
    s.outcome = GroupOutcome::ships;
    s.chosen = best->version_id;
    s.cold_interval = best->benchmark->verdict.cold_interval;
    s.wall_interval = best->benchmark->verdict.wall_interval;
    s.counted.clear();
    for (const auto& key : kKeys)
      if (auto value = speedup(*best->benchmark, key)) s.counted[key] = *value;
    std::string why = best->benchmark->verdict.sentence;  // "ships: faster than eager beyond the noise (...)"
    if (why.rfind("ships: ", 0) == 0) why.erase(0, 7);
    s.reason = fmt::format("v{} ({}), {}", best->version_id, best->rule, why);
    if (!elsewhere.empty()) s.reason += not_compared(elsewhere, s.gpu);
    return s;
  }
  // Eager is kept: 1.0 against eager; against torch.compile, eager's own ratio (1.0 where unmeasured).
  s.counted[{"cold", "eager"}] = 1.0;
  s.counted[{"wall", "eager"}] = 1.0;
  for (const std::string mode : {"cold", "wall"})
    if (!s.counted.contains({mode, "compile"})) s.counted[{mode, "compile"}] = 1.0;
  if (!any_generated) {
    s.outcome = GroupOutcome::not_generated;
    s.reason = last_reason.empty() ? "no version of this group exists" : last_reason;
  } else if (!any_validated) {
    s.outcome = GroupOutcome::unmeasured;
    s.reason = "not validated yet (validation and benchmarks need a GPU); eager is kept until then";
  } else if (!any_passed) {
    s.outcome = GroupOutcome::failed;
    s.reason = "no version passed validation; eager is kept";
  } else if (any_tie) {
    s.outcome = GroupOutcome::tie;
    s.reason = tie_reason;
  } else if (any_slower) {
    s.outcome = GroupOutcome::slower;
    s.reason = slower_reason;
  } else {
    s.outcome = GroupOutcome::unmeasured;
    s.reason = "passed validation but not benchmarked against eager (cold and wall); eager is kept";
  }
  if (!elsewhere.empty()) s.reason += not_compared(elsewhere, s.gpu);
  return s;
}

ModelFigures SelectionPolicy::model_figures(std::vector<GroupSelection>& groups) {
  ModelFigures m;
  m.groups = static_cast<int>(groups.size());
  for (const auto& key : kKeys) {
    double log_sum = 0;
    int n = 0;
    for (const auto& g : groups)
      if (auto it = g.counted.find(key); it != g.counted.end() && it->second > 0) {
        log_sum += std::log(it->second);
        ++n;
      }
    if (n > 0) m.geomean[key] = std::exp(log_sum / n);
  }
  for (const auto& g : groups)
    if (!g.gpu.empty() && std::find(m.mixed_gpus.begin(), m.mixed_gpus.end(), g.gpu) == m.mixed_gpus.end())
      m.mixed_gpus.push_back(g.gpu);
  if (m.mixed_gpus.size() < 2) m.mixed_gpus.clear();
  for (const auto& g : groups) {
    m.shipped += g.outcome == GroupOutcome::ships;
    m.measured += g.eager_cold_us.has_value() || g.outcome == GroupOutcome::ships;
    for (const std::string mode : {"cold", "wall"})
      if (auto it = g.counted.find({mode, "eager"}); it != g.counted.end()) {
        auto [slot, fresh] = m.slowest_vs_eager.try_emplace(mode, it->second);
        if (!fresh) slot->second = std::min(slot->second, it->second);
      }
  }
  // Amdahl: the shares from a profile where every group has one; else each group's eager cold time
  // over the sum of those times (groups without a benchmark carry no weight and are left out).
  bool from_profile = !groups.empty();
  for (const auto& g : groups) from_profile = from_profile && g.gpu_share.has_value();
  double total_eager = 0;
  if (!from_profile)
    for (const auto& g : groups) total_eager += g.eager_cold_us.value_or(0);
  double covered = 0, new_time = 0;
  for (auto& g : groups) {
    std::optional<double> share =
        from_profile ? g.gpu_share
                     : (total_eager > 0 && g.eager_cold_us ? std::optional(*g.eager_cold_us / total_eager) : std::nullopt);
    if (!from_profile) g.gpu_share = share;
    if (!share) continue;
    double s = g.counted.at({"cold", "eager"});
    covered += *share;
    new_time += *share / s;
  }
  if (covered > 0) {
    m.shares_from = from_profile ? "profile" : "eager group times";
    m.covered_share = covered;
    m.amdahl_vs_eager = 1.0 / (new_time + std::max(0.0, 1.0 - covered));
  }
  return m;
}

ModelFigures SelectionPolicy::set_figures(std::vector<GroupSelection> groups) {
  ModelFigures m = model_figures(groups);
  m.amdahl_vs_eager.reset();
  m.shares_from.clear();
  m.covered_share = 0;
  return m;
}

Selection SelectionPolicy::select(const std::vector<GroupEvidence>& groups) {
  Selection s;
  for (const auto& g : groups) s.groups.push_back(select_group(g));
  s.model = model_figures(s.groups);
  return s;
}

namespace {
json ratios(const std::map<RatioKey, double>& values) {
  json j = json::object();
  for (const auto& [key, value] : values) j[key.first + "_vs_" + key.second] = value;
  return j;
}
}  // namespace

void to_json(json& j, const GroupSelection& g) {
  j = {{"group", g.group_id},
       {"kind", g.kind},
       {"outcome", to_string(g.outcome)},
       {"chosen_version", g.chosen ? json(*g.chosen) : json(nullptr)},
       {"reason", g.reason},
       {"counted", ratios(g.counted)},
       {"cold_interval", g.cold_interval ? json(*g.cold_interval) : json(nullptr)},
       {"wall_interval", g.wall_interval ? json(*g.wall_interval) : json(nullptr)},
       {"eager_cold_us", g.eager_cold_us ? json(*g.eager_cold_us) : json(nullptr)},
       {"gpu_share", g.gpu_share ? json(*g.gpu_share) : json(nullptr)}};
  if (!g.gpu.empty()) j["gpu"] = g.gpu;
}

void to_json(json& j, const ModelFigures& m) {
  j = {{"groups", m.groups},
       {"shipped", m.shipped},
       {"measured", m.measured},
       {"geomean", ratios(m.geomean)},
       {"slowest_vs_eager", m.slowest_vs_eager},
       {"amdahl_vs_eager", m.amdahl_vs_eager ? json(*m.amdahl_vs_eager) : json(nullptr)},
       {"shares_from", m.shares_from},
       {"covered_share", m.covered_share}};
  if (!m.mixed_gpus.empty()) j["mixed_gpus"] = m.mixed_gpus;
}

void to_json(json& j, const Selection& s) { j = {{"groups", s.groups}, {"model", s.model}}; }

namespace {
std::map<RatioKey, double> ratios_from(const json& j) {
  std::map<RatioKey, double> out;
  for (const auto& [name, value] : j.items()) {
    const auto cut = name.find("_vs_");
    if (cut == std::string::npos) throw std::invalid_argument("a ratio named " + name);
    out[{name.substr(0, cut), name.substr(cut + 4)}] = value.get<double>();
  }
  return out;
}
template <typename T>
std::optional<T> optional_at(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}
}  // namespace

GroupOutcome outcome_from_string(const std::string& text) {
  for (auto o : {GroupOutcome::ships, GroupOutcome::tie, GroupOutcome::slower, GroupOutcome::failed,
                 GroupOutcome::not_generated, GroupOutcome::unmeasured})
    if (to_string(o) == text) return o;
  throw std::invalid_argument("no group outcome is called '" + text + "'");
}

void from_json(const json& j, GroupSelection& g) {
  g.group_id = j.at("group").get<int>();
  g.kind = j.value("kind", "");
  g.outcome = outcome_from_string(j.at("outcome").get<std::string>());
  g.chosen = optional_at<std::int64_t>(j, "chosen_version");
  g.reason = j.value("reason", "");
  g.counted = ratios_from(j.value("counted", json::object()));
  g.cold_interval = optional_at<RatioInterval>(j, "cold_interval");
  g.wall_interval = optional_at<RatioInterval>(j, "wall_interval");
  g.eager_cold_us = optional_at<double>(j, "eager_cold_us");
  g.gpu_share = optional_at<double>(j, "gpu_share");
  g.gpu = j.value("gpu", "");
}

void from_json(const json& j, ModelFigures& m) {
  m.groups = j.at("groups").get<int>();
  m.shipped = j.at("shipped").get<int>();
  m.measured = j.value("measured", 0);
  m.geomean = ratios_from(j.value("geomean", json::object()));
  m.slowest_vs_eager = j.value("slowest_vs_eager", std::map<std::string, double>{});
  m.amdahl_vs_eager = optional_at<double>(j, "amdahl_vs_eager");
  m.shares_from = j.value("shares_from", "");
  m.covered_share = j.value("covered_share", 0.0);
  m.mixed_gpus = j.value("mixed_gpus", std::vector<std::string>{});
}

void from_json(const json& j, Selection& s) {
  s.groups = j.at("groups").get<std::vector<GroupSelection>>();
  s.model = j.at("model").get<ModelFigures>();
}

}  // namespace nova
