#pragma once
// The text `nova check-package` prints for a whole-model check: validation and the package's call counts,
// each variant's cold and wall medians and energy per call, the ratios with their 95% intervals and
// verdicts, the Amdahl estimate beside the measured ratio, the GPU time per call by fusion group before
// and after (the check's profile), and what to review.
#include <string>

#include "core/verify/model_check_result.h"

namespace nova {

class ModelCheckTable {
 public:
  static std::string format(const ModelCheckResult& result);
};

}  // namespace nova
