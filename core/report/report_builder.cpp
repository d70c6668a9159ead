#include "core/report/report_builder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/llm/llm_search_store.h"
#include "core/project/project_error.h"
#include "core/report/report_error.h"
#include "core/select/selection_policy.h"
#include "core/session/project_evidence.h"
#include "core/verify/model_check_result.h"

namespace nova {
namespace {
using json = nlohmann::json;

template <typename T>
struct Stored {
  std::int64_t id = 0;
  T value;
  std::string created_at;
  std::string source() const { return fmt::format("result {}", id); }
};

// The newest record of `kind` this version can read, with its id (as ProjectEvidence reads them).
template <typename T>
std::optional<Stored<T>> newest(const std::vector<ResultRecord>& records, const std::string& kind) {
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    if (it->kind != kind) continue;
    json j = json::parse(it->json, nullptr, false);
    if (j.is_discarded()) continue;
    try {
      return Stored<T>{it->id, j.get<T>(), it->created_at};
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

struct VersionFacts {
  CandidateVersion version;
  std::optional<Stored<ValidationResult>> validation;
  std::optional<Stored<BenchmarkResult>> benchmark;
};

std::string shape_text(const std::vector<std::int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// The tensor named `name` in the graph (an input, a parameter or a node's output).
const TensorInfo* find_tensor(const ModelGraph& graph, const std::string& name) {
  for (const auto& t : graph.inputs)
    if (t.name == name) return &t;
  for (const auto& p : graph.params)
    if (p.graph_input == name || p.name == name) return &p.tensor;
  for (const auto& n : graph.nodes)
    for (const auto& t : n.outputs)
      if (t.name == name) return &t;
  return nullptr;
}

std::vector<ReportOp> group_ops(const ModelGraph& graph, const FusionGroup& group) {
  std::vector<ReportOp> ops;
  for (int id : group.nodes) {
    auto it = std::find_if(graph.nodes.begin(), graph.nodes.end(), [&](const GraphNode& n) { return n.id == id; });
    if (it == graph.nodes.end()) continue;
    std::vector<std::string> in, out, dtypes;
    for (const auto& a : it->args)
      if (const TensorInfo* t = a.tensor.empty() ? nullptr : find_tensor(graph, a.tensor)) {
        in.push_back(shape_text(t->shape));
        dtypes.push_back(t->dtype);
      }
    for (const auto& t : it->outputs) {
      out.push_back(shape_text(t.shape));
      dtypes.push_back(t.dtype);
    }
    std::sort(dtypes.begin(), dtypes.end());
    dtypes.erase(std::unique(dtypes.begin(), dtypes.end()), dtypes.end());
    ops.push_back({id, it->op, it->target, fmt::format("{} -> {}", fmt::join(in, ", "), fmt::join(out, ", ")),
                   fmt::format("{}", fmt::join(dtypes, ", "))});
  }
  return ops;
}

// The candidate's speedup over `baseline` in `mode`: the ratio of medians measured side by side in one
// run, with the 95% interval from the raw samples (RatioInterval), or why there is none.
ReportFigure speedup(const Stored<BenchmarkResult>& b, const std::string& mode, const std::string& baseline) {
  const Measurement* base = b.value.find(baseline, mode);
  const Measurement* cand = b.value.find("candidate", mode);
  if (!base || !cand || cand->summary.median <= 0 || base->summary.median <= 0)
    return ReportFigure::not_measured(fmt::format("{} has no {} timing of both the version and {}", b.source(), mode,
                                                  baseline == "compile" ? "torch.compile" : baseline));
  auto interval = RatioInterval::of(base->samples, cand->samples);
  return ReportFigure::ratio(base->summary.median / cand->summary.median,
                             interval ? std::optional(interval->low) : std::nullopt,
                             interval ? std::optional(interval->high) : std::nullopt, b.source());
}

ReportFigure energy(const Stored<BenchmarkResult>& b, const std::string& variant) {
  const json& e = b.value.energy;
  if (!e.is_object() || !e.contains(variant) || !e[variant].value("available", false) ||
      !e[variant].contains("mj_per_call") || !e[variant]["mj_per_call"].is_number())
    return ReportFigure::not_measured(fmt::format("{} holds no energy reading of {}", b.source(), variant));
  return ReportFigure::quantity(e[variant]["mj_per_call"].get<double>(), "mJ", b.source());
}

// The largest error of a kind: the worker's aggregate over every trial and output (raw "max_errors"),
// else the largest of the trials that reported it.
ReportFigure worst(const Stored<ValidationResult>& v, std::optional<double> TrialSummary::*field,
                   const char* aggregate, const std::string& unit) {
  std::optional<double> most;
  const json errors = v.value.raw.value("max_errors", json::object());
  if (errors.contains(aggregate) && errors[aggregate].is_number()) most = errors[aggregate].get<double>();
  for (const auto& t : v.value.trials)
    if (!errors.contains(aggregate) && t.*field) most = std::max(most.value_or(0.0), *(t.*field));
  if (!most) return ReportFigure::not_measured(fmt::format("{} records no such error", v.source()));
  ReportFigure f;
  f.value = most;
  f.unit = unit;
  f.text = fmt::format("{:.3g}", *most);
  f.source = v.source();
  return f;
}

ReportCorrectness correctness(const Stored<ValidationResult>& v) {
  ReportCorrectness c;
  c.verdict = v.value.verdict;
  c.trials = static_cast<int>(v.value.trials.size());
  c.trials_passed = v.value.trials_passed();
  c.closer_to_exact = v.value.closer_to_exact;
  c.source = v.source();
  c.max_abs_vs_eager = worst(v, &TrialSummary::max_abs_vs_eager, "vs_eager_abs", "abs");
  c.max_rel_vs_eager = worst(v, &TrialSummary::max_rel_vs_eager, "vs_eager_rel", "rel");
  c.max_abs_vs_fp64 = worst(v, &TrialSummary::max_abs_vs_fp64, "vs_fp64_abs", "abs");
  c.eager_max_abs_vs_fp64 = worst(v, &TrialSummary::eager_max_abs_vs_fp64, "eager_vs_fp64_abs", "abs");
  std::set<std::string> shapes;
  for (const auto& t : v.value.raw.value("trials", json::array()))
    for (const auto& o : t.value("outputs", json::array()))
      if (o.contains("shape")) shapes.insert(shape_text(o["shape"].get<std::vector<std::int64_t>>()));
  c.shapes_tested.assign(shapes.begin(), shapes.end());
  for (const auto& check : v.value.checks)
    if (check.name == "second_shape") c.shapes_tested.push_back("second shape: " + (check.detail.empty() ? std::string(check.passed ? "passed" : "failed") : check.detail));
  const json method = v.value.raw.value("method", json::object());
  std::vector<std::string> tolerances;
  const json by_dtype = method.value("tolerances", json::object());
  for (const auto& [dtype, tol] : by_dtype.items())
    if (tol.is_number()) tolerances.push_back(fmt::format("{} {:g}", dtype, tol.get<double>()));
  c.tolerance = tolerances.empty() ? "not recorded"
                                   : fmt::format("atol = rtol per dtype: {}{}", fmt::join(tolerances, ", "),
                                                 method.value("strict", false) ? " (strict)" : "");
  return c;
}

std::string env_text(const json& env, const std::string& key) {
  if (!env.is_object() || !env.contains(key) || env[key].is_null()) return {};
  return env[key].is_string() ? env[key].get<std::string>() : env[key].dump();
}

// Time per call of a benchmark variant in a mode, as a figure.
ReportFigure time_of(const Measurement* m, const std::string& source, const std::string& what) {
  if (!m || m->summary.n == 0) return ReportFigure::not_measured(what + " was not measured");
  return ReportFigure::quantity(m->summary.median, "us", source);
}

ReportGroup build_group(const ModelGraph& graph, const FusionGroup& fg, const GroupSelection& sel,
                        const std::vector<VersionFacts>& versions, const std::string& model, const std::string& project) {
  ReportGroup g;
  g.group_id = fg.id;
  g.kind = fg.kind;
  g.outcome = to_string(sel.outcome);
  g.reason = sel.reason;
  g.ops = group_ops(graph, fg);
  g.flops = fg.flops;
  g.bytes = fg.bytes;
  g.shipped = sel.chosen;
  // The version whose figures the report shows: the shipped one, else the fastest measured (cold, over eager).
  const VersionFacts* shown = nullptr;
  double best = -1;
  for (const auto& v : versions) {
    if (sel.chosen && v.version.id == *sel.chosen) {
      shown = &v;
      break;
    }
    if (v.benchmark && v.benchmark->value.verdict.cold_vs_eager && *v.benchmark->value.verdict.cold_vs_eager > best) {
      best = *v.benchmark->value.verdict.cold_vs_eager;
      shown = &v;
    } else if (!shown && v.validation) {
      shown = &v;
    }
  }
  for (const auto& v : versions) {
    ReportVersion rv;
    rv.id = v.version.id;
    rv.origin = v.version.origin.describe();
    if (v.version.parent_id && v.version.origin.kind != OriginKind::builtin)
      rv.origin += fmt::format(" (parent v{})", *v.version.parent_id);
    rv.origin_kind = to_string(v.version.origin.kind);
    rv.validation = v.validation ? v.validation->value.verdict : "not validated";
    rv.verdict = v.benchmark ? v.benchmark->value.verdict.sentence : "not measured";
    if (v.validation) rv.validation_source = v.validation->source();
    if (v.benchmark) rv.benchmark_source = v.benchmark->source();
    g.versions.push_back(std::move(rv));
    if (v.benchmark) {
      const Measurement* cold = v.benchmark->value.find("candidate", "cold");
      if (cold && cold->summary.median > 0 && fg.flops > 0 && fg.bytes > 0)
        g.roofline.push_back({fmt::format("v{} ({})", v.version.id, v.version.origin.describe()), fg.id, fg.flops,
                              fg.bytes, cold->summary.median * 1e-6, v.benchmark->source()});
    }
  }
  const std::string none = shown ? "" : "no version of this group was validated or measured";
  g.cold_vs_eager = g.wall_vs_eager = g.cold_vs_compile = g.wall_vs_compile = ReportFigure::not_measured(none);
  g.bandwidth_share = g.achieved_bandwidth = g.achieved_flop_rate = ReportFigure::not_measured(none);
  g.energy_eager = g.energy_version = g.energy_compile = ReportFigure::not_measured(none);
  g.time_before = g.time_after = ReportFigure::not_measured(none);
  if (!shown) return g;
  g.measured = shown->version.id;
  g.reproduce.push_back(fmt::format("nova validate {} --version {} --project {}", model, shown->version.id, project));
  if (shown->validation) {
    g.correctness = correctness(*shown->validation);
    for (const auto& c : shown->validation->value.checks)
      g.checks.push_back({c.name, c.passed ? "passed" : "failed", c.detail, shown->validation->source()});
    for (const auto& f : shown->validation->value.flags) g.flags.push_back(f);
  }
  if (!shown->benchmark) {
    const std::string why = fmt::format("v{} was not benchmarked", shown->version.id);
    g.cold_vs_eager = g.wall_vs_eager = g.cold_vs_compile = g.wall_vs_compile = ReportFigure::not_measured(why);
    g.bandwidth_share = g.achieved_bandwidth = g.achieved_flop_rate = ReportFigure::not_measured(why);
    g.energy_eager = g.energy_version = g.energy_compile = ReportFigure::not_measured(why);
    g.time_before = g.time_after = ReportFigure::not_measured(why);
    return g;
  }
  const Stored<BenchmarkResult>& b = *shown->benchmark;
  g.reproduce.push_back(fmt::format("nova bench {} --version {} --project {} --mode all", model, shown->version.id, project));
  for (const auto& m : b.value.measurements)
    g.timings.push_back({m.variant, m.mode, m.metric, m.summary.median, m.summary.q1, m.summary.q3, m.summary.n, b.source()});
  g.cold_vs_eager = speedup(b, "cold", "eager");
  g.wall_vs_eager = speedup(b, "wall", "eager");
  g.cold_vs_compile = speedup(b, "cold", "compile");
  g.wall_vs_compile = speedup(b, "wall", "compile");
  g.energy_eager = energy(b, "eager");
  g.energy_version = energy(b, "candidate");
  g.energy_compile = energy(b, "compile");
  g.time_before = time_of(b.value.find("eager", "cold"), b.source(), "eager's cold time");
  g.time_after = sel.chosen ? time_of(b.value.find("candidate", "cold"), b.source(), "the version's cold time") : g.time_before;
  auto share = std::find_if(b.value.copy_shares.begin(), b.value.copy_shares.end(),
                            [](const CopyShare& s) { return s.mode == "cold"; });
  g.bandwidth_share = share != b.value.copy_shares.end()
                          ? ReportFigure::quantity(share->share(), "share", b.source())
                          : ReportFigure::not_measured(b.source() + " timed no copy reference (cold)");
  if (const Measurement* cold = b.value.find("candidate", "cold"); cold && cold->summary.median > 0) {
    const double us = cold->summary.median;
    g.achieved_bandwidth = fg.bytes > 0 ? ReportFigure::quantity(fg.bytes / (us * 1e3), "GB/s", b.source())
                                        : ReportFigure::not_measured("intake estimated no bytes for the group");
    g.achieved_flop_rate = fg.flops > 0 ? ReportFigure::quantity(fg.flops / (us * 1e3), "GFLOP/s", b.source())
                                        : ReportFigure::not_measured("intake estimated no FLOPs for the group");
    if (const Measurement* eager = b.value.find("eager", "cold"); eager && eager->summary.median > 0 && fg.flops > 0 && fg.bytes > 0)
      g.roofline.push_back({"eager", fg.id, fg.flops, fg.bytes, eager->summary.median * 1e-6, b.source()});
  } else {
    g.achieved_bandwidth = g.achieved_flop_rate = ReportFigure::not_measured(b.source() + " has no cold timing");
  }
  for (const auto& f : b.value.flags) g.flags.push_back(f);
  for (const auto& v : b.value.verification)
    if (v.value("hidden_work", false))
      g.checks.push_back({"hidden work (" + v.value("variant", std::string("?")) + ")", "failed",
                          "GPU work outside the timed span", b.source()});
  return g;
}

void add_fact(std::vector<ReportFact>& facts, const std::string& label, const std::string& text, const std::string& source) {
  facts.push_back({label, text.empty() ? "not recorded" : text, text.empty() ? "" : source});
}

// The GPU's theoretical fp32 peak on its CUDA cores, as Nsight Compute draws its roofline's peak: SMs x
// FP32 lanes per SM x 2 (an FMA is two FLOPs) x the highest SM clock the result saw. The lanes per SM by
// compute capability are the CUDA programming guide's throughput table (32-bit floating-point FMA per clock
// per SM). Unset, with why, where the environment lacks one of them.
struct Fp32Peak {
  double gflop_per_s = 0;
  int sm_count = 0, lanes = 0, clock_mhz = 0;
  std::string missing;
};
Fp32Peak fp32_peak(const json& env) {
  Fp32Peak p;
  const std::string cap = env_text(env, "capability");
  static const std::map<std::string, int> lanes = {{"sm_70", 64},  {"sm_75", 64},  {"sm_80", 64},  {"sm_86", 128},
                                                   {"sm_87", 128}, {"sm_89", 128}, {"sm_90", 128}, {"sm_100", 128},
                                                   {"sm_120", 128}};
  if (!lanes.count(cap)) {
    p.missing = cap.empty() ? "the results record no compute capability" : "no FP32 lane count known for " + cap;
    return p;
  }
  p.lanes = lanes.at(cap);
  p.sm_count = env.contains("sm_count") && env["sm_count"].is_number() ? env["sm_count"].get<int>() : 0;
  if (env.contains("clocks_seen") && env["clocks_seen"].is_array())
    for (const auto& c : env["clocks_seen"]) p.clock_mhz = std::max(p.clock_mhz, c.value("sm", 0));
  if (p.sm_count <= 0 || p.clock_mhz <= 0) {
    p.missing = "the results record no SM count or SM clock";
    return p;
  }
  p.gflop_per_s = double(p.sm_count) * p.lanes * 2.0 * p.clock_mhz * 1e-3;
  return p;
}

void environment_facts(ReportData& d, const json& env, const std::string& source) {
  auto& f = d.environment;
  std::string gpu = env_text(env, "gpu");
  if (!gpu.empty())
    gpu += fmt::format(" ({}, {} SMs)", env_text(env, "capability"), env_text(env, "sm_count"));
  add_fact(f, "GPU", gpu, source);
  add_fact(f, "GPU memory",
           env.contains("memory_bytes") ? fmt::format("{:.1f} GiB", env["memory_bytes"].get<double>() / (1 << 30)) : "",
           source);
  std::string clocks;
  if (env.contains("clocks_seen") && env["clocks_seen"].is_array() && !env["clocks_seen"].empty()) {
    std::vector<std::string> seen;
    for (const auto& c : env["clocks_seen"])
      seen.push_back(fmt::format("{}: SM {} MHz, memory {} MHz", c.value("moment", std::string("?")), c.value("sm", 0),
                                 c.value("mem", 0)));
    clocks = fmt::format("{} (seen, not set)", fmt::join(seen, "; "));
  }
  add_fact(f, "clocks", clocks, source);
  add_fact(f, "power limit", env.contains("power_limit_w") ? fmt::format("{:g} W", env["power_limit_w"].get<double>()) : "", source);
  add_fact(f, "driver", env_text(env, "driver"), source);
  add_fact(f, "CUDA", env_text(env, "cuda"), source);
  add_fact(f, "cuDNN", env_text(env, "cudnn"), source);
  add_fact(f, "PyTorch", env_text(env, "torch"), source);
  add_fact(f, "Python", env_text(env, "python"), source);
  add_fact(f, "host", env_text(env, "host"), source);
  add_fact(f, "host CPU", env_text(env, "cpu"), source);
  add_fact(f, "host memory",
           env.contains("host_memory_bytes") ? fmt::format("{:.1f} GiB", env["host_memory_bytes"].get<double>() / (1 << 30)) : "",
           source);
  add_fact(f, "OS", env_text(env, "os"), source);
}

void method_facts(ReportData& d, const Stored<BenchmarkResult>* b, const Stored<ValidationResult>* v) {
  auto& f = d.method;
  if (b) {
    const json& m = b->value.method;
    const std::string src = b->source();
    add_fact(f, "timer", m.value("timer", ""), src);
    add_fact(f, "modes", fmt::format("{}", fmt::join(b->value.modes(), ", ")), src);
    add_fact(f, "cold mode (L2 flush)", b->value.cold_flush_sentence(), src);
    add_fact(f, "wall mode", m.value("wall", ""), src);
    add_fact(f, "warm-up", m.value("warmup", ""), src);
    add_fact(f, "calls", m.contains("calls") ? m["calls"].dump() : "", src);
    add_fact(f, "interleaving", m.value("interleaved", false) ? "variants interleaved (A B A B ...), pairs resampled together" : "", src);
    add_fact(f, "torch.compile", m.value("compile", ""), src);
    add_fact(f, "energy", m.value("energy", ""), src);
    add_fact(f, "statistic", m.value("statistic", ""), src);
    add_fact(f, "TF32 (benchmark)",
             m.contains("tf32") ? (m["tf32"].get<bool>() ? "on for both sides" : "off for both sides (fp32 is fp32)") : "", src);
  } else {
    add_fact(f, "benchmark", "", "");
  }
  if (v) {
    const json m = v->value.raw.value("method", json::object());
    const std::string src = v->source();
    add_fact(f, "validation trials", m.contains("trials") ? fmt::format("{} trials, seeds {}", m["trials"].dump(), m.value("seeds", json::array()).dump()) : "", src);
    add_fact(f, "validation order", m.value("order", ""), src);
    add_fact(f, "poisoning", m.value("poison", ""), src);
    add_fact(f, "TF32 (validation)",
             m.contains("tf32") ? (m["tf32"].get<bool>() ? "on" : "off for both sides") : "", src);
    add_fact(f, "tolerance policy",
             "within the dtype's tolerance of eager, or closer to exact than eager: no element further from the float64 "
             "reference than eager's (docs/VERIFY.md)",
             src);
  }
}

// The whole model's GPU time split from the profile a check stored: each shipped group's time before
// and after, and the rest of each call (groups left to PyTorch, nodes outside every group) as one
// stretch, so the two bars hold the same parts. A check without a profile gives `missing`.
ReportTimeSplit time_split_of(const Stored<ModelCheckResult>& check) {
  ReportTimeSplit s;
  const std::string src = fmt::format("model_check {}", check.id);
  const ModelCheckResult& r = check.value;
  if (const std::string why = r.split_missing(); !why.empty()) {
    s.missing = src + ": " + why;
    return s;
  }
  s.source = src;
  s.method = r.gpu_split.value("method", std::string());
  if (r.gpu_split.contains("before_plain") && r.gpu_split["before_plain"].is_object())
    s.plain_before_us = r.gpu_split["before_plain"].value("total_us", 0.0);
  for (const auto& [key, label] : {std::pair{"before", "before (the client's Model)"},
                                   std::pair{"after", "after (ModelNew)"}}) {
    const SplitBar bar = *r.split_bar(key);
    ReportSplitSide out{label, bar.total_us, {}};
    for (const auto& [g, us] : bar.shipped) out.segments.push_back({g, fmt::format("group {}", g), us});
    out.segments.push_back({std::nullopt, "the rest: groups left to PyTorch, nodes outside every group", bar.rest_us});
    s.sides.push_back(std::move(out));
  }
  return s;
}

}  // namespace

ReportData ReportBuilder::build(const ProjectStore& store, const Context& context) {
  auto model = store.model();
  if (!model || model->graph_json.empty())
    throw ReportError(fmt::format("the project at {} holds no graph: run `nova intake` or `nova optimize` first",
                                  store.folder().string()));
  const ModelGraph graph = json::parse(model->graph_json).get<ModelGraph>();
  const std::vector<GroupEvidence> evidence = ProjectEvidence::read(store, graph);
  const Selection selection = SelectionPolicy::select(evidence);

  ReportData d;
  d.generated_at = context.generated_at;
  d.model_path = context.model_path;
  d.model_name = std::filesystem::path(context.model_path).filename().string();
  d.project = store.folder().string();
  d.nodes = static_cast<int>(graph.nodes.size());
  d.capture_route = graph.capture_route;
  d.model_unchanged = context.model_unchanged;
  if (!context.model_unchanged)
    d.problems.push_back("the model file changed since intake: every figure is of the model as it was captured; run "
                         "`nova optimize` again to measure the current one");

  // Every version's latest results, with their ids.
  std::map<int, std::vector<VersionFacts>> by_group;
  bool any_validated = false;
  for (const auto& ge : evidence)
    for (const auto& ve : ge.versions) {
      if (ve.version_id == 0) continue;  // the generator declined the group
      VersionFacts f;
      f.version = store.version(ve.version_id);
      const auto records = store.results(ve.version_id);
      f.validation = newest<ValidationResult>(records, "validation");
      f.benchmark = newest<BenchmarkResult>(records, "benchmark");
      any_validated = any_validated || (f.validation && f.validation->value.passed);
      by_group[ge.group_id].push_back(std::move(f));
    }
  if (!any_validated)
    throw ReportError(fmt::format("the project at {} holds no validated version: nothing could be reported as "
                                  "measured; run `nova optimize {}` on a GPU machine first",
                                  store.folder().string(), context.model_path));

  for (const auto& fg : graph.groups) {
    const GroupSelection* sel = selection.group(fg.id);
    if (!sel) continue;
    d.groups.push_back(build_group(graph, fg, *sel, by_group[fg.id], context.model_path, d.project));
    if (sel->chosen)
      d.headline.groups_accelerated.push_back(fg.id);
    else
      d.headline.groups_left.emplace_back(fg.id, sel->reason);
  }

  // The environments of every result the figures come from: one GPU and one torch, or a problem.
  std::map<std::string, std::vector<std::string>> setups;  // "GPU, torch" -> sources
  std::vector<std::string> without_env;
  const json* first_env = nullptr;
  std::string first_env_source;
  const Stored<BenchmarkResult>* method_bench = nullptr;
  const Stored<ValidationResult>* method_validation = nullptr;
  double gpu_seconds = 0;
  int results_counted = 0;
  auto note_env = [&](const json& env, const std::string& source) {
    const std::string gpu = env_text(env, "gpu"), torch = env_text(env, "torch");
    if (gpu.empty() || torch.empty()) {
      without_env.push_back(source);
      return;
    }
    setups[gpu + " with torch " + torch].push_back(source);
    if (!first_env) {
      first_env = &env;
      first_env_source = source;
    }
  };
  std::set<std::string> stamps;  // when each counted result was stored (ISO 8601 sorts by time)
  std::set<std::string> sandbox_off;
  bool any_llm = false;
  for (const auto& [group, versions] : by_group)
    for (const auto& v : versions) {
      any_llm = any_llm || v.version.origin.kind == OriginKind::llm;
      if (v.validation) {
        // A version refused or failed to build before any trial never reached a GPU: it has no figure to
        // tie to a machine (the integrity section lists why it stopped).
        const ValidationResult& val = v.validation->value;
        if (val.passed || !val.trials.empty()) note_env(val.environment, v.validation->source());
        gpu_seconds += val.elapsed_s;
        ++results_counted;
        stamps.insert(v.validation->created_at);
        if (!method_validation) method_validation = &*v.validation;
        if (val.environment.is_object() && val.environment.value("sandboxed", true) == false)
          sandbox_off.insert(fmt::format("v{}", v.version.id));
      }
      if (v.benchmark) {
        note_env(v.benchmark->value.environment, v.benchmark->source());
        gpu_seconds += v.benchmark->value.elapsed_s;
        ++results_counted;
        stamps.insert(v.benchmark->created_at);
        if (!method_bench) method_bench = &*v.benchmark;
        for (const auto& flag : v.benchmark->value.flags)
          d.flags.push_back({fmt::format("v{}: {}", v.version.id, flag), v.benchmark->source(),
                             v.benchmark->value.verdict.ships()
                                 ? "not resolved: the version ships with this flag; review it before quoting the figure"
                                 : "the version does not ship: " + v.benchmark->value.verdict.sentence});
      }
    }

  // The whole model, as `nova check-package` measured it (the newest check that passed validation).
  std::optional<Stored<ModelCheckResult>> check;
  for (const auto& rec : store.model_checks()) {
    json j = json::parse(rec.json, nullptr, false);
    if (j.is_discarded()) continue;
    try {
      Stored<ModelCheckResult> c{rec.id, j.get<ModelCheckResult>(), rec.created_at};
      note_env(c.value.environment, fmt::format("model_check {}", rec.id));
      gpu_seconds += c.value.elapsed_s;
      ++results_counted;
      stamps.insert(c.created_at);
      if (c.value.passed) check = std::move(c);
    } catch (const std::exception&) {
    }
  }
  auto& h = d.headline;
  const std::string no_check =
      "the whole model was not measured side by side: run `nova export`, then `nova check-package` on a GPU machine";
  h.cold_vs_eager = h.wall_vs_eager = h.cold_vs_compile = h.wall_vs_compile = ReportFigure::not_measured(no_check);
  h.time_before = h.time_after = ReportFigure::not_measured(no_check);
  h.energy_before = h.energy_after = ReportFigure::not_measured(no_check);
  h.package = "not exported";
  if (check) {
    const std::string src = fmt::format("model_check {}", check->id);
    auto ratio = [&](const std::string& mode, const std::string& baseline) {
      const ModelRatio* r = check->value.ratio(mode, "optimized", baseline);
      if (!r) return ReportFigure::not_measured(src + " has no " + mode + " timing against " + baseline);
      return ReportFigure::ratio(r->value, r->interval ? std::optional(r->interval->low) : std::nullopt,
                                 r->interval ? std::optional(r->interval->high) : std::nullopt, src);
    };
    h.cold_vs_eager = ratio("cold", "eager");
    h.wall_vs_eager = ratio("wall", "eager");
    h.cold_vs_compile = ratio("cold", "compile");
    h.wall_vs_compile = ratio("wall", "compile");
    auto find = [&](const std::string& variant) -> const Measurement* {
      for (const auto& m : check->value.measurements)
        if (m.variant == variant && m.mode == "cold") return &m;
      return nullptr;
    };
    h.time_before = time_of(find("eager"), src, "the model's eager time");
    h.time_after = time_of(find("optimized"), src, "the optimized model's time");
    auto energy_of = [&](const std::string& variant) {
      const auto mj = check->value.energy_mj(variant);
      return mj ? ReportFigure::quantity(*mj, "mJ", src)
                : ReportFigure::not_measured(src + ": " + check->value.energy_missing(variant));
    };
    h.energy_before = energy_of("eager");
    h.energy_after = energy_of("optimized");
    h.package = check->value.package + (check->value.package_version.empty() ? "" : " " + check->value.package_version);
    h.whole_model_note = fmt::format("measured by nova check-package ({}): the exported package's ModelNew against the "
                                     "client's Model, interleaved in one process",
                                     src);
    for (const auto& r : check->value.review) d.flags.push_back({"whole model: " + r, src, "not resolved: review before quoting"});
    for (const auto& m : check->value.measurements)
      d.samples.push_back({src, m.variant, m.mode, m.metric, m.samples});
    d.time_split = time_split_of(*check);
    // The ranges around the groups' nodes must not change what runs: the instrumented capture's total
    // against the Model's own, as profiled beside it.
    if (!d.time_split.sides.empty() && d.time_split.plain_before_us && *d.time_split.plain_before_us > 0) {
      const double gap = d.time_split.sides.front().total_us / *d.time_split.plain_before_us - 1.0;
      if (std::abs(gap) > 0.1)
        d.problems.push_back(fmt::format("the GPU time split's 'before' bar ({:.1f} us per call, the model as captured) differs "
                                         "from the Model's own profile ({:.1f} us) by {:+.0f}%: read its shares, not its total",
                                         d.time_split.sides.front().total_us, *d.time_split.plain_before_us, gap * 100));
    }
  } else {
    h.whole_model_note = no_check;
    d.time_split.missing = no_check;
  }
  // Amdahl's estimate, marked as one, from the groups' cold speedups.
  std::vector<std::string> estimate_sources;
  for (const auto& g : d.groups)
    if (!g.cold_vs_eager.source.empty()) estimate_sources.push_back(g.cold_vs_eager.source);
  if (selection.model.amdahl_vs_eager && !estimate_sources.empty()) {
    h.amdahl_estimate = ReportFigure::ratio(*selection.model.amdahl_vs_eager, std::nullopt, std::nullopt,
                                            fmt::format("estimate from {}", fmt::join(estimate_sources, ", ")));
    h.amdahl_estimate.text += fmt::format(" (estimate: Amdahl's law over the groups' cold speedups, weighted by {})",
                                          selection.model.shares_from);
  } else {
    h.amdahl_estimate = ReportFigure::not_measured("no group has a cold benchmark against eager");
  }

  if (setups.size() > 1) {
    std::vector<std::string> lines;
    for (const auto& [setup, sources] : setups) lines.push_back(fmt::format("{} ({})", setup, fmt::join(sources, ", ")));
    d.problems.push_back(fmt::format("the results come from different GPUs or torch versions: {}; each ratio was "
                                     "measured side by side on one of them, but they are not one model's figures",
                                     fmt::join(lines, "; ")));
    h.amdahl_estimate = ReportFigure::not_measured("the groups' results come from different GPUs or torch versions");
  }
  if (!without_env.empty())
    d.problems.push_back(fmt::format("no environment (GPU and torch version) is recorded in {}: the figures from {} "
                                     "cannot be tied to a machine",
                                     fmt::join(without_env, ", "), without_env.size() == 1 ? "it" : "them"));
  for (const auto& g : d.groups)
    if (g.outcome == "unmeasured")
      d.problems.push_back(fmt::format("group {}: {}", g.group_id, g.reason));

  d.roofline_bandwidth = ReportFigure::not_measured("no benchmark timed the copy reference (cold)");
  double fastest = 0;
  for (const auto& [group, versions] : by_group)
    for (const auto& v : versions)
      if (v.benchmark)
        for (const auto& s : v.benchmark->value.copy_shares)
          if (s.mode == "cold" && s.copy_tb_per_s() * 1e3 > fastest) {
            fastest = s.copy_tb_per_s() * 1e3;
            d.roofline_bandwidth = ReportFigure::quantity(fastest, "GB/s", v.benchmark->source());
          }

  if (first_env) environment_facts(d, *first_env, first_env_source);
  else environment_facts(d, json::object(), "");
  // The peak line: theoretical (nova times no peak-FLOP kernel), from the first result's environment.
  if (setups.size() > 1) {
    d.roofline_peak_flop_rate = ReportFigure::not_measured("the results come from different GPUs or torch versions");
  } else if (!first_env || first_env_source.rfind("result ", 0) != 0) {
    d.roofline_peak_flop_rate = ReportFigure::not_measured("no result recorded its GPU");
  } else {
    const Fp32Peak peak = fp32_peak(*first_env);
    if (peak.missing.empty()) {
      d.roofline_peak_flop_rate = ReportFigure::quantity(peak.gflop_per_s, "GFLOP/s", "estimate from " + first_env_source);
      d.roofline_peak_flop_rate.text += " fp32 CUDA cores, theoretical";
      add_fact(d.environment, "fp32 peak (theoretical)",
               fmt::format("{} SMs x {} FP32 lanes x 2 FLOP per FMA x {} MHz (the highest SM clock seen) = {:.1f} TFLOP/s; "
                           "the roofline's peak line, as Nsight Compute draws it. Versions on the tensor cores (the 3xTF32 "
                           "GEMMs) can sit above it",
                           peak.sm_count, peak.lanes, peak.clock_mhz, peak.gflop_per_s * 1e-3),
               first_env_source);
    } else {
      d.roofline_peak_flop_rate = ReportFigure::not_measured(peak.missing);
    }
  }
  method_facts(d, method_bench, method_validation);

  // Integrity: each check over every shown version, then what the method itself guarantees.
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> seen;  // name -> passed, failed
  for (const auto& g : d.groups)
    for (const auto& c : g.checks)
      (c.outcome == "passed" ? seen[c.name].first : seen[c.name].second).push_back(c.source);
  for (const std::string name : {"static: kernel defined", "static: kernel launched",
                                 "static: no fallback, shell, socket or side stream", "build", "trials",
                                 "second_shape", "streams"})
    if (!seen.count(name))
      d.integrity.push_back({name, "not recorded", "no shown version's stored result records this check", ""});
  for (const auto& [name, outcome] : seen) {
    const auto& [passed, failed] = outcome;
    std::vector<std::string> all = passed;
    all.insert(all.end(), failed.begin(), failed.end());
    d.integrity.push_back({name, failed.empty() ? "passed" : "failed",
                           fmt::format("passed in {} of {} results", passed.size(), all.size()),
                           fmt::format("{}", fmt::join(all, ", "))});
  }
  // Inputs unchanged: checked in every trial (a modified input is a trial's problem); stated only where
  // the stored results keep their trials.
  std::vector<std::string> with_trials, modified;
  for (const auto& [group, versions] : by_group)
    for (const auto& v : versions) {
      if (!v.validation || v.validation->value.trials.empty()) continue;
      with_trials.push_back(v.validation->source());
      for (const auto& t : v.validation->value.trials)
        for (const auto& problem : t.problems)
          if (problem.find("was modified") != std::string::npos) modified.push_back(v.validation->source());
    }
  if (with_trials.empty())
    d.integrity.push_back({"inputs unchanged", "not recorded",
                           "no stored validation keeps its trials (the check runs in every trial)", ""});
  else
    d.integrity.push_back({"inputs unchanged", modified.empty() ? "passed" : "failed",
                           modified.empty() ? "checked after every candidate run in every trial"
                                            : fmt::format("an input was modified in {}", fmt::join(modified, ", ")),
                           fmt::format("{}", fmt::join(with_trials, ", "))});
  if (any_llm)
    d.integrity.push_back({"LLM code in the sandbox", sandbox_off.empty() ? "passed" : "failed",
                           sandbox_off.empty() ? "every LLM-written version ran inside bubblewrap"
                                               : fmt::format("ran without the sandbox (the project allowed it): {}",
                                                             fmt::join(sandbox_off, ", ")),
                           ""});

  // Cost.
  d.cost.push_back({"GPU time", fmt::format("{:.1f} s in the workers of {} stored results", gpu_seconds, results_counted), "all results"});
  stamps.erase("");
  if (!stamps.empty())
    d.cost.push_back({"span of the measurements",
                      fmt::format("from the first counted result, stored {}, to the last, stored {}", *stamps.begin(),
                                  *stamps.rbegin()),
                      "all results"});
  try {
    LlmSearchStore llm(store.folder());
    long long tokens_in = 0, tokens_out = 0;
    double usd = 0;
    int requests = 0;
    auto searches = llm.searches();
    for (const auto& s : searches)
      for (const auto& c : llm.candidates(s.id)) {
        tokens_in += c.tokens_in;
        tokens_out += c.tokens_out;
        usd += c.cost_usd;
        ++requests;
      }
    if (searches.empty()) d.cost.push_back({"LLM", "no LLM was used", ""});
    else {
      d.cost.push_back({"LLM tokens", fmt::format("{} in, {} out over {} requests of {} search{}", tokens_in, tokens_out,
                                                  requests, searches.size(), searches.size() == 1 ? "" : "es"),
                        "llm_searches"});
      d.cost.push_back({"LLM cost", fmt::format("{:.2f} USD (at the provider prices in the settings)", usd), "llm_searches"});
    }
  } catch (const ProjectError& e) {
    d.cost.push_back({"LLM", std::string("not recorded: ") + e.what(), ""});
  }

  // Reproduction and versions.
  d.reproduce.push_back(fmt::format("nova optimize {} --project {}", context.model_path, d.project));
  for (const auto& g : d.groups) d.reproduce.insert(d.reproduce.end(), g.reproduce.begin(), g.reproduce.end());
  if (check)
    d.reproduce.push_back(fmt::format("nova check-package {} --package {} --project {}", context.model_path,
                                      check->value.package.empty() ? "PACKAGE_DIR" : "<the " + check->value.package + " package folder>",
                                      d.project));
  d.reproduce.push_back(fmt::format("nova report {} --project {} --out REPORT_DIR", context.model_path, d.project));
  add_fact(d.versions, "nova", context.nova_version, "this build");
  add_fact(d.versions, "nova source commit", context.nova_commit, "this build");
  add_fact(d.versions, "project schema", std::to_string(store.schema_version()), "project");
  add_fact(d.versions, "torch at intake", graph.torch_version, "graph");
  if (check) add_fact(d.versions, "package", h.package, fmt::format("model_check {}", check->id));

  // The raw samples of every shown benchmark.
  for (const auto& [group, versions] : by_group)
    for (const auto& v : versions)
      if (v.benchmark)
        for (const auto& m : v.benchmark->value.measurements)
          d.samples.push_back({v.benchmark->source(), m.variant, m.mode, m.metric, m.samples});
  return d;
}

}  // namespace nova
