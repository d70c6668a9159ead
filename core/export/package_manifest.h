#pragma once
// package.json of an export package: the data its Python side reads (core/export). Per fusion group:
// the op it ships (its schema, the shapes and dtypes its kernels were built for, the ids and ATen
// targets of the graph nodes it replaces, its inputs and outputs by value name) or why it stays
// PyTorch; the model's form, inputs and parameters (for the state_dict check); the selection
// policy's figures. Data, not code: names from the client's model reach the package only here and in
// the client's own files.
#include <nlohmann/json.hpp>

#include "core/export/export_plan.h"

namespace nova {

class PackageManifest {
 public:
  static nlohmann::json build(const ExportPlan& plan);
};

}  // namespace nova
