#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/export/export_plan.h"
#include "core/project/project_store.h"
#include "core/select/selection.h"

namespace nova::ui {

// What the Export wizard offers per fusion group, read from the project: every version of the group
// with why it cannot ship (ExportPlanner::why_not_shippable; empty when it can), the version the
// export would ship now (the user's choice for export, else the selection policy's, as ExportPlanner
// decides) and the version the user selects in the wizard. A selection that differs is stored as the
// group's choice for export when the export starts (as the Versions panel's "Choose for export"
// does), so `nova export` on the project makes the same package.
class ExportChoices {
 public:
  struct Version {
    std::int64_t id = 0;
    std::string label;    // "v12 · builtin: gemm_epilogue · 1.42x cold, 1.31x wall vs eager"
    std::string problem;  // why it cannot ship; empty when it can
  };
  struct Group {
    int id = 0;
    std::string kind;
    std::vector<Version> versions;
    std::optional<std::int64_t> planned;   // what the export ships without the wizard's selection
    std::optional<std::int64_t> selected;  // the wizard's selection (unset: the group stays PyTorch)
    std::string reason;                    // the plan's sentence: why it ships or stays PyTorch
    const Version* version(std::int64_t id) const;
  };

  // Reads the project. Throws ExportError when no export can be planned (no graph, a model file
  // changed since intake, a stored choice that cannot ship).
  static ExportChoices read(const ProjectStore& store, bool modelUnchanged);

  std::vector<Group>& groups() { return groups_; }
  const std::vector<Group>& groups() const { return groups_; }
  const std::string& modelPath() const { return modelPath_; }
  int shipping() const;  // groups with a selected version
  // Selects `version` for group `groupId`; false (nothing changes) when it cannot ship.
  bool select(int groupId, std::int64_t version);

  // The plan the export will make with the wizard's selections: they are stored in a transaction
  // that is rolled back, so the project does not change. Throws ExportError.
  ExportPlan preview(ProjectStore& store, bool modelUnchanged, const ExportOptions& options) const;
  // Stores each selection that differs from the planned version as its group's choice for export.
  void apply(ProjectStore& store) const;
  // The selection policy's whole-model figures (Amdahl's estimate) for the selected versions.
  ModelFigures figures() const;

 private:
  std::string modelPath_;
  std::vector<Group> groups_;
  std::vector<GroupEvidence> evidence_;  // per group, in the graph's order
};

}  // namespace nova::ui
