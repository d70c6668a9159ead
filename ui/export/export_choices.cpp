#include "ui/export/export_choices.h"

#include <fmt/format.h>

#include "core/export/export_planner.h"
#include "core/select/selection_policy.h"
#include "core/session/project_evidence.h"

namespace nova::ui {
namespace {

std::optional<double> speedup(const BenchmarkResult& b, const char* mode) {
  for (const auto& s : b.speedups)
    if (s.mode == mode && s.baseline == "eager") return s.value;
  return std::nullopt;
}

std::string label(const VersionEvidence& v) {
  std::string text = fmt::format("v{} · {}", v.version_id, v.rule.empty() ? "version" : v.rule);
  if (v.generator_declined) return text + " · declined by the generator";
  if (!v.validation) return text + " · not validated";
  if (!v.validation->passed) return text + " · failed validation";
  if (!v.benchmark) return text + " · not benchmarked";
  auto cold = speedup(*v.benchmark, "cold"), wall = speedup(*v.benchmark, "wall");
  if (cold && wall) text += fmt::format(" · {:.2f}x cold, {:.2f}x wall vs eager", *cold, *wall);
  return text;
}

}  // namespace

const ExportChoices::Version* ExportChoices::Group::version(std::int64_t id) const {
  for (const auto& v : versions)
    if (v.id == id) return &v;
  return nullptr;
}

ExportChoices ExportChoices::read(const ProjectStore& store, bool modelUnchanged) {
  const ExportPlan plan = ExportPlanner::plan(store, modelUnchanged, {});
  ExportChoices c;
  c.modelPath_ = plan.model_path.string();
  c.evidence_ = ProjectEvidence::read(store, plan.graph);
  for (std::size_t i = 0; i < plan.groups.size(); ++i) {
    const ExportGroup& g = plan.groups[i];
    Group group{g.group_id, g.kind, {}, g.version_id, g.version_id, g.reason};
    for (const auto& v : c.evidence_[i].versions) {
      std::string problem = ExportPlanner::why_not_shippable(v);
      // A version that could ship in a group that does not: the plan's reason (the capture route).
      if (problem.empty() && !g.ships()) problem = g.reason;
      group.versions.push_back({v.version_id, label(v), problem});
    }
    c.groups_.push_back(std::move(group));
  }
  return c;
}

int ExportChoices::shipping() const {
  int n = 0;
  for (const auto& g : groups_) n += g.selected.has_value();
  return n;
}

bool ExportChoices::select(int groupId, std::int64_t version) {
  for (auto& g : groups_) {
    const Version* v = g.id == groupId ? g.version(version) : nullptr;
    if (!v) continue;
    if (!v->problem.empty()) return false;
    g.selected = version;
    return true;
  }
  return false;
}

ExportPlan ExportChoices::preview(ProjectStore& store, bool modelUnchanged, const ExportOptions& options) const {
  auto rollback = store.write_transaction();  // never committed: the project does not change
  apply(store);
  return ExportPlanner::plan(store, modelUnchanged, options);
}

void ExportChoices::apply(ProjectStore& store) const {
  for (const auto& g : groups_)
    if (g.selected && g.selected != g.planned) store.choose_for_export(*g.selected);
}

ModelFigures ExportChoices::figures() const {
  std::vector<GroupSelection> selections;
  for (std::size_t i = 0; i < groups_.size(); ++i) {
    GroupEvidence e = evidence_[i];
    // The group as it will ship: only the selected version is a candidate.
    if (groups_[i].selected)
      std::erase_if(e.versions, [&](const VersionEvidence& v) { return v.version_id != *groups_[i].selected; });
    selections.push_back(SelectionPolicy::select_group(e));
  }
  return SelectionPolicy::model_figures(selections);
}

}  // namespace nova::ui
