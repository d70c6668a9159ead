#pragma once
// Turns an LLM's answer in KernelBench's form (a ```python block that builds its CUDA with load_inline
// and defines ModelNew, whose forward calls the loaded function) into a full-path candidate: the worker
// package's kernelbench_form module reads the Python with `ast` (it runs none of it) in a child process
// of the workers' Python and scrubbed environment, as kernelguard runs, and writes one torch extension
// whose forward takes the group's inputs in call order. The extension is built with nvcc and run by the
// sandboxed worker like every full-path candidate. What cannot be mapped gives a sentence for the model.
#include <string>

#include "core/gen/candidate.h"
#include "core/llm/llm_answer_parser.h"

namespace nova {

class KernelBenchForm {
 public:
  explicit KernelBenchForm(std::string python) : python_(std::move(python)) {}
  // `python_source`: the answer's ```python block; `base`: the group's candidate skeleton. The result
  // keeps `python_source` in model_new_source; its candidate (path "full", origin.answer_form
  // "model_new") holds the extension in extension_source.
  ParsedAnswer read(const std::string& python_source, const Candidate& base) const;

 private:
  std::string python_;
};

}  // namespace nova
