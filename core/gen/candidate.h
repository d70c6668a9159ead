#pragma once
// A candidate: CUDA source that replaces one fusion group, with everything needed to run it on
// torch tensors without compiling any host code (the launch plan), where it came from, and the
// same kernels as a torch extension for delivery. Generators (builtin, LLM, a user's edit) produce
// it; the builder compiles cuda_source with NVRTC; the worker's harness
// (resources/python/nova_worker/harness.py) executes the plan; validation and benchmarks judge it.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nova {

// Where a candidate came from.
struct CandidateOrigin {
  std::string kind;                   // "builtin", "llm" or "user_edit"
  std::string rule;                   // builtin: the rule that generated it, e.g. "elementwise_chain"
  std::string provider, model;        // llm
  int round = 0;                      // llm feedback round
  std::optional<int> parent_version;  // user_edit: the version edited
  // llm: the form the answer came in: "" (device code + launch plan) or "model_new" (KernelBench's
  // ModelNew + load_inline, run on the full path).
  std::string answer_form;
  bool operator==(const CandidateOrigin&) const = default;
};

// A tensor the plan reads, writes or allocates.
struct PlanTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::string dtype;  // "float32", "float16", "bfloat16"
  bool operator==(const PlanTensor&) const = default;
};

// One argument of a step. `ref` names "input:i", "output:i" or "temp:i"; otherwise `scalar`
// holds a constant and `scalar_type` its C type ("float", "double", "int32", "int64").
struct PlanArg {
  std::string ref;
  std::string scalar_type;
  nlohmann::json scalar;
  std::string view;  // library steps only: "t" passes the tensor transposed (2-D)
  bool operator==(const PlanArg&) const = default;
};

// One step: a kernel launch of cuda_source, or a library call through PyTorch (cuBLAS, cuDNN),
// which results report as library-backed.
struct PlanStep {
  std::string type;    // "kernel" or "library"
  std::string kernel;  // kernel: the extern "C" __global__ function
  std::array<std::int64_t, 3> grid{1, 1, 1};
  std::array<std::int64_t, 3> block{1, 1, 1};
  std::int64_t shared_bytes = 0;
  std::string op;  // library: an ATen overload, e.g. "aten.addmm.default"
  std::vector<PlanArg> args;
  nlohmann::json kwargs = nlohmann::json::object();  // library: keyword constants
  std::string out;                                   // library: where the result goes ("output:0", "temp:0")
  bool operator==(const PlanStep&) const = default;
};

struct LaunchPlan {
  std::vector<PlanTensor> inputs;  // the group's inputs, in call order (its functional signature)
  std::vector<PlanTensor> outputs;
  std::vector<PlanTensor> temps;
  std::vector<PlanStep> steps;
  bool operator==(const LaunchPlan&) const = default;
};

struct Candidate {
  int group_id = -1;
  std::string model_path;
  CandidateOrigin origin;
  std::string summary;      // fused ops and the shapes it was specialised for
  std::string cuda_source;  // device code only: no torch headers (NVRTC fast path)
  std::vector<std::string> nvrtc_options;
  LaunchPlan plan;
  std::string extension_source;          // the same kernels with torch host code, for delivery (nvcc)
  std::vector<std::string> library_ops;  // ops the plan calls through PyTorch libraries
  std::optional<std::string> declined;   // why the generator produced no kernel, if it did not
  // How it runs: "fast" (cuda_source + plan, NVRTC) or "full" (extension_source alone: a torch extension
  // whose forward takes the plan's inputs in order, built with nvcc by the worker; no plan steps).
  std::string path = "fast";
  bool operator==(const Candidate&) const = default;
};

void to_json(nlohmann::json& j, const CandidateOrigin& o);
void from_json(const nlohmann::json& j, CandidateOrigin& o);
void to_json(nlohmann::json& j, const PlanTensor& t);
void from_json(const nlohmann::json& j, PlanTensor& t);
void to_json(nlohmann::json& j, const PlanArg& a);
void from_json(const nlohmann::json& j, PlanArg& a);
void to_json(nlohmann::json& j, const PlanStep& s);
void from_json(const nlohmann::json& j, PlanStep& s);
void to_json(nlohmann::json& j, const LaunchPlan& p);
void from_json(const nlohmann::json& j, LaunchPlan& p);
void to_json(nlohmann::json& j, const Candidate& c);
void from_json(const nlohmann::json& j, Candidate& c);

}  // namespace nova
