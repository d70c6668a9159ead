#pragma once
// The text `nova optimize` and `nova status` print for a project's selection: one row per version
// (rule, validation, its largest error against float64 as a multiple of eager's own, speedups over
// eager and torch.compile cold and wall, the verdict with its 95% intervals), one line per group (what
// ships, or why eager is kept), the memory-bound groups' share of a copy of their bytes, then the
// whole model's figures (geometric means, the slowest group, Amdahl's estimate).
#include <string>
#include <vector>

#include "core/select/selection.h"

namespace nova {

class SelectionTable {
 public:
  static std::string format(const std::string& model, const std::vector<GroupEvidence>& evidence,
                            const Selection& selection);
  // The whole model's figures alone.
  static std::string format_model(const ModelFigures& model);
};

}  // namespace nova
