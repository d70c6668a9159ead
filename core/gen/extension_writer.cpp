#include "core/gen/extension_writer.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "core/env/resource_paths.h"
#include "core/gen/code_text.h"
#include "core/gen/group_context.h"
#include "core/gen/pointwise_emitter.h"

namespace nova {
namespace {

std::string at_dtype(const std::string& dtype) {
  if (dtype == "float32") return "at::kFloat";
  if (dtype == "float16") return "at::kHalf";
  if (dtype == "bfloat16") return "at::kBFloat16";
  if (dtype == "float64") return "at::kDouble";
  if (dtype == "int64") return "at::kLong";
  if (dtype == "int32") return "at::kInt";
  if (dtype == "bool") return "at::kBool";
  return "at::kFloat";
}

std::string cpp_constant(const nlohmann::json& v) {
  if (v.is_null()) return "c10::nullopt";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return fmt::format("{:.17g}", v.get<double>());
  if (v.is_array()) {
    std::string s = "std::vector<int64_t>{";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + cpp_constant(v[i]);
    return s + "}";
  }
  if (v.is_string()) return cpp_string_literal(v.get<std::string>());
  throw UnsupportedGroup("a plan argument " + v.dump() + " has no C++ form");
}

// `name` where the extension calls it (a kernel, an ATen function): it must be a C identifier.
const std::string& callable(const std::string& name, const char* what) {
  if (!is_c_identifier(name))
    throw UnsupportedGroup(fmt::format("the {} '{}' is not a C identifier", what, name));
  return name;
}

// The C type of a kernel's scalar argument ("float", "double", "int32", "int64").
std::string scalar_c_type(const std::string& scalar_type) {
  static const std::map<std::string, std::string> types = {
      {"float", "float"}, {"double", "double"}, {"int32", "int"}, {"int64", "long long"}};
  auto it = types.find(scalar_type);
  if (it == types.end()) throw UnsupportedGroup("a kernel argument of scalar type '" + scalar_type + "'");
  return it->second;
}

// A plan reference ("input:0") as the extension's variable ("input_0").
std::string tensor_ref(const std::string& ref, const std::string& view) {
  auto colon = ref.find(':');
  std::string kind = ref.substr(0, colon), index = colon == std::string::npos ? "" : ref.substr(colon + 1);
  if ((kind != "input" && kind != "output" && kind != "temp") || index.empty() ||
      index.find_first_not_of("0123456789") != std::string::npos)
    throw UnsupportedGroup(fmt::format("the plan reference '{}' is not input:N, output:N or temp:N", ref));
  std::string t = kind + "_" + index;
  return view == "t" ? t + ".t()" : t;
}

// The ATen function a library step calls: "aten.addmm.default" -> "addmm".
std::string library_function(const std::string& op_name) {
  std::string op = op_name.substr(op_name.find('.') + 1);
  return op.substr(0, op.find('.'));
}

}  // namespace

std::vector<std::string> ExtensionWriter::aten_headers(const Candidate& c) {
  std::vector<std::string> headers = {"ATen/core/Tensor.h", "ATen/ops/empty.h"};
  for (const auto& s : c.plan.steps) {
    if (s.type == "kernel") continue;
    std::string h = fmt::format("ATen/ops/{}.h", callable(library_function(s.op), "library function"));
    if (std::find(headers.begin(), headers.end(), h) == headers.end()) headers.push_back(h);
  }
  return headers;
}

std::string ExtensionWriter::header(const std::string& name) {
  // Read once per process and header: every candidate's extension inlines the same files.
  static std::mutex mutex;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  std::ifstream in(kernels_dir() / "nova" / name);
  if (!in) throw std::runtime_error("kernels/nova/" + name + " is missing from the kernels folder");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  // Inlined into one file, the header's include guard is noise (nvcc warns about it).
  if (auto p = t.find("#pragma once\n"); p != std::string::npos) t.erase(p, 13);
  return cache[name] = t;
}

std::string ExtensionWriter::common_header() { return header("common.cuh"); }

std::string ExtensionWriter::host_code(const Candidate& c, const std::string& function) {
  const LaunchPlan& p = c.plan;
  // The source's kernels/nova includes: common.cuh opens every extension (below), so its include
  // is dropped; any other header a rule includes (the tensor-core GEMM's) is inlined where it stood.
  static const std::regex include(R"re(#include "nova/([A-Za-z0-9_]+\.cuh)"\n)re");
  std::string kernels, rest = c.cuda_source;
  for (std::smatch m; std::regex_search(rest, m, include); rest = m.suffix().str()) {
    const std::string name = m[1].str();
    kernels += m.prefix().str();
    if (name != "common.cuh")
      kernels += fmt::format("// ---- kernels/nova/{} ----\n{}\n", name, header(name));
  }
  kernels += rest;

  std::string params, checks, allocs, steps;
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    const auto& t = p.inputs[i];
    params += fmt::format("{}at::Tensor input_{}", i ? ", " : "", i);
    std::string dims;
    for (std::size_t d = 0; d < t.shape.size(); ++d) dims += (d ? ", " : "") + std::to_string(t.shape[d]);
    checks += fmt::format(
        "  TORCH_CHECK(input_{0}.is_cuda() && input_{0}.is_contiguous(), \"{1}: a contiguous CUDA tensor is "
        "expected\");\n"
        "  TORCH_CHECK(input_{0}.scalar_type() == {2} && input_{0}.sizes() == at::IntArrayRef({{{3}}}),\n"
        "              \"{1}: expected {4}{5} (the shapes this kernel was specialised for)\");\n",
        i, cpp_string_body(t.name), at_dtype(t.dtype), dims, cpp_string_body(t.dtype),
        GroupContext::shape_text(t.shape));
  }
  auto alloc = [&](const char* kind, const std::vector<PlanTensor>& ts) {
    for (std::size_t i = 0; i < ts.size(); ++i) {
      std::string dims;
      for (std::size_t d = 0; d < ts[i].shape.size(); ++d)
        dims += (d ? ", " : "") + std::to_string(ts[i].shape[d]);
      allocs += fmt::format("  at::Tensor {}_{} = at::empty({{{}}}, input_0.options().dtype({}));\n",
                            kind, i, dims, at_dtype(ts[i].dtype));
    }
  };
  alloc("output", p.outputs);
  alloc("temp", p.temps);
  auto type_of = [&](const std::string& ref) {
    auto colon = ref.find(':');
    std::string kind = ref.substr(0, colon);
    std::size_t i = std::stoul(ref.substr(colon + 1));
    const auto& list = kind == "input" ? p.inputs : kind == "output" ? p.outputs : p.temps;
    return PointwiseEmitter::storage_type(list.at(i).dtype);
  };
  for (const auto& s : p.steps) {
    if (s.type == "kernel") {
      std::string args;
      for (std::size_t i = 0; i < s.args.size(); ++i) {
        const auto& a = s.args[i];
        std::string arg =
            !a.ref.empty()
                ? fmt::format("reinterpret_cast<{}*>({}.data_ptr())", type_of(a.ref), tensor_ref(a.ref, ""))
                : fmt::format("({}){}", scalar_c_type(a.scalar_type), cpp_constant(a.scalar));
        args += (i ? ",\n      " : "") + arg;
      }
      // Above the default limit a kernel must ask for its shared memory: once per device and kernel,
      // not on every call (a driver call on the host path of each call otherwise).
      if (s.shared_bytes >= 48 * 1024)
        steps += fmt::format(
            "  {{\n"
            "    static std::atomic<bool> asked[64];\n"
            "    const int device = input_0.get_device();\n"
            "    if (device < 0 || device >= 64 || !asked[device].load(std::memory_order_relaxed)) {{\n"
            "      C10_CUDA_CHECK(cudaFuncSetAttribute({}, cudaFuncAttributeMaxDynamicSharedMemorySize, {}));\n"
            "      if (device >= 0 && device < 64) asked[device].store(true, std::memory_order_relaxed);\n"
            "    }}\n"
            "  }}\n",
            callable(s.kernel, "kernel"), s.shared_bytes);
      steps += fmt::format(
          "  {}<<<dim3({}, {}, {}), dim3({}, {}, {}), {}, stream>>>(\n      {});\n"
          "  C10_CUDA_KERNEL_LAUNCH_CHECK();\n",
          callable(s.kernel, "kernel"), s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2],
          s.shared_bytes, args);
    } else {
      const std::string op = library_function(s.op);
      std::string args;
      for (std::size_t i = 0; i < s.args.size(); ++i)
        args += (i ? ", " : "") + (s.args[i].ref.empty() ? cpp_constant(s.args[i].scalar)
                                                         : tensor_ref(s.args[i].ref, s.args[i].view));
      for (const char* k : {"beta", "alpha"})
        if (s.kwargs.contains(k)) args += ", " + cpp_constant(s.kwargs[k]);
      steps += fmt::format("  {} = at::{}({});  // library call\n", tensor_ref(s.out, ""),
                           callable(op, "library function"), args);
    }
  }
  std::string outs;
  for (std::size_t i = 0; i < p.outputs.size(); ++i) outs += fmt::format("{}output_{}", i ? ", " : "", i);

  return fmt::format(
      R"(// ---- kernels/nova/common.cuh ----
{common}
// ---- the candidate's kernels ----
{kernels}
std::vector<at::Tensor> {function}({params}) {{
{checks}  const auto stream = at::cuda::getCurrentCUDAStream();
{allocs}{steps}  return {{{outs}}};
}}
)",
      fmt::arg("common", common_header()), fmt::arg("kernels", kernels), fmt::arg("function", callable(function, "host function")),
      fmt::arg("params", params), fmt::arg("checks", checks), fmt::arg("allocs", allocs), fmt::arg("steps", steps),
      fmt::arg("outs", outs));
}

std::string ExtensionWriter::write(const Candidate& c) {
  return fmt::format(
      R"(// Torch extension of a Nova candidate: {summary}
// Build with torch.utils.cpp_extension (nvcc); call forward(*inputs) -> list of outputs.
#include <atomic>

#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

{code}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{
  m.def("forward", &forward, "Nova candidate for fusion group {group}");
}}
)",
      fmt::arg("summary", comment_safe(c.summary)), fmt::arg("code", host_code(c, "forward")),
      fmt::arg("group", c.group_id));
}

}  // namespace nova
