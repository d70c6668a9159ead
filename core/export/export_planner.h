#pragma once
// Decides what a package ships, from a project: per fusion group of the stored graph, the version the
// user chose for export (ProjectStore::choose_for_export) or else the selection policy's choice, and
// only a version that passed validation and whose benchmark verdict ships (faster than eager beyond
// the noise: a tie is not a win); every other group runs the client's original PyTorch code, with the
// reason. Refuses (ExportError) a model file that changed since intake, a chosen version that is
// unvalidated, failed, declined, tied or unmeasured, a version whose group no longer matches the
// graph, and a package name or architecture list that cannot be used. Used by `nova export`.
#include <string>

#include "core/export/export_plan.h"
#include "core/project/project_store.h"

namespace nova {

class ExportPlanner {
 public:
  // `model_unchanged`: ProjectSession::model_unchanged() (the model file's text is the stored one).
  static ExportPlan plan(const ProjectStore& store, bool model_unchanged, const ExportOptions& options);
  // Why version `v` cannot ship ("it failed validation (...)"); empty when it can (validated, passed,
  // its benchmark's verdict ships). The studio's Export wizard shows it beside each version.
  static std::string why_not_shippable(const VersionEvidence& v);
  // nova_<model file stem>, with every character that is not [A-Za-z0-9_] as '_'.
  static std::string default_package_name(const std::string& model_path);
  // Throws ExportError unless `name` is a Python identifier (ASCII, lower-case advised) and not a keyword.
  static void check_package_name(const std::string& name);
  // Throws ExportError unless `list` is TORCH_CUDA_ARCH_LIST syntax: "8.0;9.0+PTX".
  static void check_arch_list(const std::string& list);
};

}  // namespace nova
