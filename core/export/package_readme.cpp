#include "core/export/package_readme.h"

#include <fmt/format.h>

#include "core/export/package_sources.h"
#include "core/gen/group_context.h"

namespace nova {
namespace {

std::string ratio(const std::map<std::string, double>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "not measured" : fmt::format("{:.2f}x", it->second);
}

std::string group_row_figures(const ExportGroup& g) {
  if (!g.benchmark) return "not measured | not measured | not measured | not measured";
  std::map<std::string, double> s;
  for (const auto& sp : g.benchmark->speedups) s[sp.mode + "/" + sp.baseline] = sp.value;
  std::string cold = ratio(s, "cold/eager"), wall = ratio(s, "wall/eager");
  const BenchmarkVerdict& v = g.benchmark->verdict;
  if (v.cold_interval) cold += fmt::format(" [{:.2f}, {:.2f}]", v.cold_interval->low, v.cold_interval->high);
  if (v.wall_interval) wall += fmt::format(" [{:.2f}, {:.2f}]", v.wall_interval->low, v.wall_interval->high);
  return fmt::format("{} | {} | {} | {}", cold, wall, ratio(s, "cold/compile"), ratio(s, "wall/compile"));
}

// `text` on one line for a code block (where Markdown escapes would show).
std::string one_line(const std::string& text) {
  std::string out;
  for (unsigned char c : text) out += c < 0x20 || c == 0x7f ? ' ' : char(c);
  return out;
}

}  // namespace

std::string PackageReadme::markdown_safe(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      out += ' ';
      continue;
    }
    if (std::string_view("\\`*_{}[]<>()#+-!|~").find(char(c)) != std::string_view::npos) out += '\\';
    out += char(c);
  }
  return out;
}

std::string PackageReadme::write(const ExportPlan& plan, const std::string& command) {
  const std::string pkg = plan.package_name;
  const std::string model = markdown_safe(plan.model_path.filename().string());
  std::string groups, shapes, method;
  for (const auto& g : plan.groups) {
    groups += fmt::format("| {} | {} | {} | {} |\n", g.group_id, markdown_safe(g.kind),
                          g.ships() ? fmt::format("kernel, version {} ({})", *g.version_id, markdown_safe(g.rule))
                                    : "PyTorch (the client's code)",
                          markdown_safe(g.reason));
    if (!g.ships()) continue;
    std::string in;
    for (const auto& t : g.candidate->plan.inputs)
      in += fmt::format("{}{} {}{}", in.empty() ? "" : ", ", markdown_safe(t.name), markdown_safe(t.dtype),
                        markdown_safe(GroupContext::shape_text(t.shape)));
    shapes += fmt::format("- `torch.ops.{}.{}` (group {}): {}\n", pkg, PackageSources::op_name(g.group_id),
                          g.group_id, in);
  }
  std::string figures;
  for (const auto& g : plan.groups) {
    if (!g.ships()) continue;
    figures += fmt::format("| {} | {} |\n", g.group_id, group_row_figures(g));
    if (method.empty() && g.benchmark) {
      const auto& m = g.benchmark->method;
      auto text = [&](const nlohmann::json& j, const char* key, const std::string& otherwise) {
        if (!j.contains(key)) return otherwise;
        return markdown_safe(j[key].is_string() ? j[key].get<std::string>() : j[key].dump());
      };
      method = fmt::format(
          "Group figures: the project's stored benchmark of each shipped version (nova's worker: the version, "
          "eager and torch.compile interleaved in one process; cold: medians of {} calls, GPU time by CUDA "
          "events, {}; wall: {}; TF32 {}); in brackets the 95% bootstrap interval of the ratio to eager. GPU: {}.",
          text(m, "calls", "the recorded number of"), markdown_safe(g.benchmark->cold_flush_sentence()),
          text(m, "wall", "host time per call"), m.value("tf32", false) ? "on" : "off",
          text(g.benchmark->environment, "gpu", "not recorded"));
    }
  }
  if (figures.empty()) figures = "| none | not measured | not measured | not measured | not measured |\n";
  const ModelFigures& m = plan.selection.model;
  std::string amdahl = m.amdahl_vs_eager
                           ? fmt::format("{:.2f}x over eager (Amdahl's law over the groups' cold speedups, shares of "
                                         "GPU time from {})",
                                         *m.amdahl_vs_eager, markdown_safe(m.shares_from))
                           : "not estimated (no group was measured)";

  return fmt::format(
      R"(# {pkg}

Optimized CUDA kernels for `{model}`, packaged as a drop-in replacement of its `Model` by
`nova export` (Neural Nova Studio). {shipped} of {total} fusion groups run nova's kernels; the
others run the client's original PyTorch code.

## Install

In an environment with torch and the CUDA toolkit (nvcc):

    pip install --no-build-isolation .

The kernels are built for `TORCH_CUDA_ARCH_LIST` = `{arch}` unless the environment sets
`TORCH_CUDA_ARCH_LIST`. The extension has no pybind11 module: its ops are registered with
`TORCH_LIBRARY` in the namespace `torch.ops.{pkg}`. It is built against Python's limited API
(`py_limited_api`, one wheel for CPython 3.9 and later); the kernels use the full LibTorch C++ API
(`at::Tensor`, ATen library calls), not PyTorch's stable ABI, so the wheel is tied to the torch
version it was built with.

## Use

    from {pkg} import ModelNew, optimize

    model = ModelNew(*init_args)           # the same constructor arguments as Model
    model.load_state_dict(checkpoint)      # the same state_dict keys: a Model checkpoint loads unchanged
    y = model(*inputs)                     # the same forward signature

    model = optimize(existing_model)       # or: accelerate an existing Model instance in place

    with torch.no_grad():                  # inference: how every figure below was timed
        y = model(*inputs)

For inference, call the model under `torch.no_grad()` (or `torch.inference_mode()`): with autograd
on, each op's autograd formula (see Training) runs a layer of Python per call, which a model that is
bound by host time per call pays in wall time.

The client's model file ships inside the package as `{pkg}/client_model.py`. On the first call with
a new input signature (shapes, dtypes, device, non-tensor arguments, training mode) the package
captures the model's forward with `torch.export`, as nova's intake did, and replaces each shipped
group's nodes by a call to its op; a functional-form model (`forward(..., fn=module_fn)`) works the
same way, and a call with another `fn` runs the client's code unchanged.

## What ships

| group | kind | runs | why |
|---|---|---|---|
{groups}
## Accelerated shapes

Each op runs its kernels only on CUDA inputs of exactly the shapes and dtypes below (the kernels are
specialised to them); a call with any other shape, dtype or device runs the group's original PyTorch
ops instead, so every shape the client's model accepts still works. The kernels read their inputs as
contiguous: where the model hands a group a strided view (a transposed key in attention), the op gets
a contiguous copy of it, and the whole-model figures below include that copy.

{shapes_or_none}
## torch.compile

Every op has a fake (meta) implementation (`torch.library.register_fake`), so `torch.compile` traces
through `ModelNew` in one graph, on its own or inside a larger compiled model. Compiling `ModelNew` on
its own does not make its kernels faster (they are already fused), and it adds `torch.compile`'s own
host cost to every call: where a call's time is mostly host time (small inputs), the compiled model is
slower per call than `ModelNew` alone. `python benchmark.py` measures both on your GPU.

## Training

Each op has an autograd formula (`torch.library.register_autograd`): backward recomputes the group's
original PyTorch ops and differentiates them. Backward passes are not accelerated.

## Figures

| group | cold vs eager | wall vs eager | cold vs torch.compile | wall vs torch.compile |
|---|---|---|---|---|
{figures}
{method}

Whole model: not measured by nova for this package. Estimate: {amdahl}. Measure it on your GPU with

    python benchmark.py

which times this package's model against eager and `torch.compile` of the original (and
`torch.compile` of the optimized model), cold and wall, interleaved in one process.

## Tests

    pip install pytest
    pytest tests

Each op against the group's original PyTorch at two shapes (with `torch.library.opcheck`), the whole
model against the original on fresh inputs and weights, and gradients against eager. Without a CUDA
GPU only the checks that need none run (schemas, signature, state_dict keys, the PyTorch fallbacks).

## Reproduce

    {command}
)",
      fmt::arg("pkg", pkg), fmt::arg("model", model), fmt::arg("shipped", plan.shipped()),
      fmt::arg("total", plan.groups.size()), fmt::arg("arch", plan.arch_list), fmt::arg("groups", groups),
      fmt::arg("shapes_or_none", shapes.empty() ? "None: no group ships a kernel.\n" : shapes),
      fmt::arg("figures", figures), fmt::arg("method", method), fmt::arg("amdahl", amdahl),
      fmt::arg("command", one_line(command)));
}

}  // namespace nova
