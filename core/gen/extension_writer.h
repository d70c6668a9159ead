#pragma once
// Writes a candidate as a complete torch extension source (one .cu: the shared device helpers
// inlined, the kernels, a host function that checks the inputs, allocates the outputs, runs the
// launch plan on the current stream, and the pybind11 module): the delivery form, built with nvcc.
#include <string>
#include <vector>

#include "core/gen/candidate.h"

namespace nova {

// The writer of a candidate's torch-extension source (see above).
class ExtensionWriter {
 public:
  // The extension's source; the Python entry point is `forward(*inputs)` returning a list. Names
  // and constants from the graph go into comments and string literals escaped (core/gen/code_text.h);
  // throws UnsupportedGroup for a plan whose kernels, library functions, references or scalar types
  // are not ones C++ can name.
  static std::string write(const Candidate& candidate);
  // The part of write() without includes and module: the inlined headers, the kernels and the host
  // function named `function` (a C identifier) taking the plan's inputs as at::Tensor and returning
  // its outputs as std::vector<at::Tensor>. The export (core/export) registers it as a torch op.
  static std::string host_code(const Candidate& candidate, const std::string& function);
  // The ATen headers host_code needs, no more ("ATen/core/Tensor.h", "ATen/ops/empty.h", and
  // "ATen/ops/<fn>.h" for each library function a step calls): a source that includes only these
  // compiles in about a third of the time of one that includes <torch/all.h>.
  static std::vector<std::string> aten_headers(const Candidate& candidate);
  // kernels/nova/common.cuh, read from the kernels folder.
  static std::string common_header();
  // kernels/nova/<name>, read once, with its include guard removed (it is inlined).
  static std::string header(const std::string& name);
};

}  // namespace nova
