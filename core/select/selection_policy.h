#pragma once
// The selection policy, in one place: for each fusion group, which version ships (the fastest by its
// cold, then wall, speedup over eager among those that passed validation and whose benchmark verdict
// ships, i.e. faster than eager beyond the noise), and the whole model's figures: geometric means of
// the groups' speedups against eager and torch.compile (cold and wall; a group that keeps eager counts
// 1.0 against eager and eager's own ratio against torch.compile), the slowest group, and Amdahl's
// estimate of the model's speedup from the groups' shares of GPU time. The studio pre-selects with it,
// `nova optimize` and `nova status` print it; the export and the report use it.
#include <vector>

#include "core/select/selection.h"

namespace nova {

class SelectionPolicy {
 public:
  static Selection select(const std::vector<GroupEvidence>& groups);
  static GroupSelection select_group(const GroupEvidence& group);
  static ModelFigures model_figures(std::vector<GroupSelection>& groups);
  // The figures over the groups of several models (`nova optimize A.py B.py`): the geometric means,
  // the slowest group and the counts; no Amdahl estimate, since each group's weight is a share of its
  // own model.
  static ModelFigures set_figures(std::vector<GroupSelection> groups);
};

}  // namespace nova
