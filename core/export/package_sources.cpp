#include "core/export/package_sources.h"

#include <fmt/format.h>

#include "core/env/build_info.h"
#include "core/export/export_error.h"
#include "core/gen/code_text.h"
#include "core/gen/extension_writer.h"
#include "core/gen/group_context.h"

namespace nova {
namespace {
// A file name for places with their own quoting rules (TOML): [A-Za-z0-9._-] kept, the rest '_'.
std::string plain_name(const std::string& name) {
  std::string out;
  for (unsigned char c : name) out += (std::isalnum(c) && c < 128) || c == '.' || c == '-' ? char(c) : '_';
  return out;
}
}  // namespace

std::string PackageSources::op_name(int group_id) { return fmt::format("group_{}", group_id); }

std::string PackageSources::infer_name(const std::string& op_or_schema) {
  const auto paren = op_or_schema.find('(');
  if (paren == std::string::npos) return op_or_schema + "_infer";
  return op_or_schema.substr(0, paren) + "_infer" + op_or_schema.substr(paren);
}

std::string PackageSources::schema(const ExportGroup& group) {
  std::string params;
  for (std::size_t i = 0; i < group.candidate->plan.inputs.size(); ++i)
    params += fmt::format("{}Tensor input_{}", i ? ", " : "", i);
  return fmt::format("{}({}) -> Tensor[]", op_name(group.group_id), params);
}

std::string PackageSources::registration(const ExportPlan& plan) {
  std::string defs;
  for (const auto& g : plan.groups)
    if (g.ships()) {
      defs += fmt::format("  m.def({});  // {} group {}\n", cpp_string_literal(schema(g)), comment_safe(g.kind),
                          g.group_id);
      defs += fmt::format("  m.def({});  // its twin without an autograd formula\n",
                          cpp_string_literal(infer_name(schema(g))));
    }
  return fmt::format(
      R"~(// The ops of {pkg}: one per fusion group that ships a kernel, in the package's own namespace
// (torch.ops.{pkg}). Their CUDA implementations are registered by csrc/group_N.cu; their fake
// (meta) functions and autograd formulas by {pkg}/_ops.py. Each op group_N has a twin, group_N_infer,
// with the same kernels and no autograd formula: the package calls it where autograd is off, so such
// a call never enters Python. Written by nova export {version}.
// The library has no Python API: `import {pkg}._C` only loads it, which registers the ops. It is
// built against Python's limited API (one wheel for CPython 3.9 and later); the kernels use the full
// LibTorch C++ API (at::Tensor, ATen library calls), not PyTorch's stable ABI.
#include <Python.h>
#include <torch/library.h>

extern "C" {{
PyObject* PyInit__C(void) {{
  static struct PyModuleDef module_def = {{PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr}};
  return PyModule_Create(&module_def);
}}
}}

TORCH_LIBRARY({pkg}, m) {{
{defs}}}
)~",
      fmt::arg("pkg", plan.package_name), fmt::arg("version", build_info::version()), fmt::arg("defs", defs));
}

std::string PackageSources::group_source(const ExportPlan& plan, const ExportGroup& group) {
  const Candidate& c = *group.candidate;
  std::string code;
  try {
    code = ExtensionWriter::host_code(c, op_name(group.group_id));
  } catch (const std::exception& e) {
    throw ExportError(fmt::format("group {}'s version {} cannot be written as a torch op: {}", group.group_id,
                                  group.version_id.value_or(0), e.what()));
  }
  // Only the ATen headers the host code needs (not <torch/all.h>): each .cu compiles about three
  // times faster, for the client's pip install and for nova's own build check.
  std::string includes;
  for (const auto& h : ExtensionWriter::aten_headers(c)) includes += fmt::format("#include <{}>\n", h);
  std::string shapes;
  for (const auto& t : c.plan.inputs)
    shapes += fmt::format("//   {} {}{}\n", comment_safe(t.name), comment_safe(t.dtype), GroupContext::shape_text(t.shape));
  return fmt::format(
      R"~(// Fusion group {id} ({kind}) of {model}: version {version} ({rule}).
// {summary}
// The op torch.ops.{pkg}.{op} runs these kernels on inputs of exactly these shapes (contiguous, on
// CUDA; {pkg}/_runtime.py copies a strided input) and sends every other call to the group's original
// PyTorch code:
{shapes}#include <atomic>

{includes}#include <torch/library.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

{code}
TORCH_LIBRARY_IMPL({pkg}, CUDA, m) {{
  m.impl("{op}", &{op});
  m.impl("{op}_infer", &{op});
}}
)~",
      fmt::arg("id", group.group_id), fmt::arg("kind", comment_safe(group.kind)),
      fmt::arg("model", comment_safe(plan.model_path.filename().string())),
      fmt::arg("version", group.version_id.value_or(0)), fmt::arg("rule", comment_safe(group.rule)),
      fmt::arg("summary", comment_safe(c.summary)), fmt::arg("pkg", plan.package_name),
      fmt::arg("op", op_name(group.group_id)), fmt::arg("shapes", shapes), fmt::arg("includes", includes),
      fmt::arg("code", code));
}

std::string PackageSources::setup_py(const ExportPlan& plan) {
  std::string sources;
  for (const auto& g : plan.groups)
    if (g.ships()) sources += fmt::format(", \"csrc/{}.cu\"", op_name(g.group_id));
  std::string ext_modules =
      plan.shipped() == 0
          ? "[],  # no group ships a kernel: the package runs the client's PyTorch code"
          : fmt::format(R"~([
    CUDAExtension(
        "{pkg}._C",
        sources=["csrc/ops.cpp"{sources}],
        py_limited_api=True,
        define_macros=[("Py_LIMITED_API", "0x03090000")],
        extra_compile_args={{"cxx": ["-O3"], "nvcc": ["-O3", "-lineinfo"]}},
    )
],)~",
                        fmt::arg("pkg", plan.package_name), fmt::arg("sources", sources));
  return fmt::format(
      R"~(# Builds {pkg}: the kernels nova export shipped for {model}, as a torch extension without a
# pybind11 module (ops registered with TORCH_LIBRARY), built against Python's limited API so one
# wheel serves CPython 3.9 and later. Install with `pip install --no-build-isolation .` in an
# environment that has torch and the CUDA toolkit (nvcc).
# The architectures: TORCH_CUDA_ARCH_LIST from the environment, else the list chosen at export.
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "{arch}")

setup(
    name="{pkg}",
    version="0.1.0",
    packages=["{pkg}"],
    package_data={{"{pkg}": ["package.json", "client_model.py", "groups/*.py"]}},
    ext_modules={ext_modules}
    cmdclass={{"build_ext": BuildExtension}},
    options={{"bdist_wheel": {{"py_limited_api": "cp39"}}}},
)
)~",
      fmt::arg("pkg", plan.package_name), fmt::arg("model", comment_safe(plan.model_path.filename().string())),
      fmt::arg("arch", plan.arch_list), fmt::arg("ext_modules", ext_modules));
}

std::string PackageSources::pyproject_toml(const ExportPlan& plan) {
  return fmt::format(
      R"~([build-system]
requires = ["setuptools>=64", "wheel", "torch"]
build-backend = "setuptools.build_meta"

[project]
name = "{pkg}"
version = "0.1.0"
description = "Optimized CUDA kernels for {model}, a drop-in replacement of its Model (written by nova export)"
readme = "README.md"
requires-python = ">=3.9"
dependencies = ["torch"]

[project.optional-dependencies]
test = ["pytest"]
)~",
      fmt::arg("pkg", plan.package_name), fmt::arg("model", plain_name(plan.model_path.filename().string())));
}

}  // namespace nova
