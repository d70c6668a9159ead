#include "core/export/package_manifest.h"

#include "core/env/build_info.h"
#include "core/export/package_sources.h"
#include "core/graph/lifted_constant.h"

namespace nova {
namespace {

nlohmann::json tensor_specs(const std::vector<PlanTensor>& tensors) {
  auto out = nlohmann::json::array();
  for (const auto& t : tensors) out.push_back({{"name", t.name}, {"shape", t.shape}, {"dtype", t.dtype}});
  return out;
}

// The stored benchmark's speedups of the shipped version, per "mode/baseline", with eager's interval.
nlohmann::json group_figures(const ExportGroup& g) {
  nlohmann::json j = nlohmann::json::object();
  if (!g.benchmark) return j;
  for (const auto& s : g.benchmark->speedups) j["speedups"][s.mode + "/" + s.baseline] = s.value;
  const BenchmarkVerdict& v = g.benchmark->verdict;
  for (const auto& [mode, interval] : {std::pair{"cold", v.cold_interval}, std::pair{"wall", v.wall_interval}})
    if (interval) j["vs_eager_interval"][mode] = {interval->low, interval->high};
  j["verdict"] = v.sentence;
  j["method"] = g.benchmark->method;
  j["gpu"] = g.benchmark->environment.value("gpu", nlohmann::json());
  return j;
}

}  // namespace

nlohmann::json PackageManifest::build(const ExportPlan& plan) {
  const ModelGraph& graph = plan.graph;
  nlohmann::json j;
  j["format"] = "nova.export";
  j["version"] = 1;
  j["package"] = plan.package_name;
  j["nova_version"] = build_info::version();
  j["arch_list"] = plan.arch_list;
  j["model_file"] = plan.model_path.filename().string();
  j["model_form"] = graph.model_form;
  j["capture_route"] = graph.capture_route;
  j["torch_version"] = graph.torch_version;
  j["inputs"] = graph.inputs;
  j["scalar_inputs"] = graph.scalar_inputs;
  j["params"] = nlohmann::json::array();
  // The state_dict entries the package checks a model against (optimize()); not the constants.
  for (const auto& p : graph.params)
    if (!is_lifted_constant(p)) j["params"].push_back({{"name", p.name}, {"shape", p.tensor.shape}, {"dtype", p.tensor.dtype}});
  j["node_targets"] = nlohmann::json::array();
  for (const auto& n : graph.nodes) j["node_targets"].push_back(n.target);
  j["groups"] = nlohmann::json::array();
  for (std::size_t i = 0; i < plan.groups.size(); ++i) {
    const ExportGroup& g = plan.groups[i];
    const FusionGroup& fg = graph.groups.at(i);
    nlohmann::json gj = {{"id", g.group_id}, {"kind", g.kind},       {"ships", g.ships()},
                         {"reason", g.reason}, {"nodes", fg.nodes}, {"inputs", fg.inputs},
                         {"outputs", fg.outputs}};
    auto targets = nlohmann::json::array();
    for (int id : fg.nodes) targets.push_back(id >= 0 && std::size_t(id) < graph.nodes.size() ? graph.nodes[id].target : "");
    gj["node_targets"] = targets;
    if (g.ships()) {
      const Candidate& c = *g.candidate;
      gj["op"] = PackageSources::op_name(g.group_id);
      gj["schema"] = PackageSources::schema(g);
      gj["version_id"] = *g.version_id;
      gj["rule"] = g.rule;
      gj["summary"] = c.summary;
      gj["input_specs"] = tensor_specs(c.plan.inputs);
      gj["output_specs"] = tensor_specs(c.plan.outputs);
      gj["library_ops"] = c.library_ops;
      gj["functional_source"] = "groups/" + PackageSources::op_name(g.group_id) + ".py";
      gj["figures"] = group_figures(g);
    }
    j["groups"].push_back(std::move(gj));
  }
  const ModelFigures& m = plan.selection.model;
  nlohmann::json figures = {{"groups", m.groups}, {"shipped", plan.shipped()}, {"measured", m.measured}};
  for (const auto& [key, value] : m.geomean) figures["group_geomean"][key.first + "/" + key.second] = value;
  if (m.amdahl_vs_eager) figures["amdahl_vs_eager"] = *m.amdahl_vs_eager;
  figures["shares_from"] = m.shares_from;
  figures["whole_model"] = nullptr;  // no whole-model benchmark is stored by this version of nova
  j["figures"] = figures;
  return j;
}

}  // namespace nova
