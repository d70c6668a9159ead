#pragma once
// Makes the client report's data (ReportData) from a project: the stored graph, every version's latest
// validation and benchmark (typed, verdicts recomputed from the raw samples), the selection policy's
// choice per group and its model figures, the whole-model checks of `nova check-package`, and the LLM
// searches' tokens and cost. It computes every figure (ratios and their 95% intervals with
// RatioInterval, shares, rates, energy) and names the stored result each one came from; where a figure
// was not measured it says so, and what the report cannot state goes into `problems` (results from
// different GPUs or torch versions, a result without its environment, a model changed since intake).
// Whole-model speedups are stated only from a `nova check-package` run, which measured them side by
// side; Amdahl's estimate is shown as an estimate. Reads only; needs no GPU.
#include <string>

#include "core/project/project_store.h"
#include "core/report/report_data.h"

namespace nova {

class ReportBuilder {
 public:
  // What the builder cannot read from the project.
  struct Context {
    std::string model_path;        // the model file as the user named it
    bool model_unchanged = true;   // the model file still has the text intake captured
    std::string nova_version, nova_commit;
    std::string generated_at;      // UTC, ISO 8601
  };

  // Throws ReportError for a project without a graph or without any validated version.
  static ReportData build(const ProjectStore& store, const Context& context);
};

}  // namespace nova
