#pragma once
// The C++ and build files of an export package (core/export): the op registration (TORCH_LIBRARY in
// the package's own namespace, one schema per shipped group, no pybind11 module), each shipped group's
// CUDA source (its kernels and host function as ExtensionWriter writes them, registered for the CUDA
// dispatch key), setup.py (a CUDAExtension built with py_limited_api for the plan's architecture
// list) and pyproject.toml. PackageWriter puts them in the package.
#include <string>

#include "core/export/export_plan.h"

namespace nova {

class PackageSources {
 public:
  // "group_3": the op, and its host function, of a group.
  static std::string op_name(int group_id);
  // "group_3(Tensor input_0, Tensor input_1) -> Tensor[]": the op's schema (without the namespace).
  static std::string schema(const ExportGroup& group);
  // The op's twin without an autograd formula: "group_3" -> "group_3_infer", and the same for a schema.
  static std::string infer_name(const std::string& op_or_schema);
  // csrc/ops.cpp: the schemas and the module's init function (the library has no Python API).
  static std::string registration(const ExportPlan& plan);
  // csrc/group_N.cu; throws ExportError when ExtensionWriter cannot write the group's plan.
  static std::string group_source(const ExportPlan& plan, const ExportGroup& group);
  static std::string setup_py(const ExportPlan& plan);
  static std::string pyproject_toml(const ExportPlan& plan);
};

}  // namespace nova
