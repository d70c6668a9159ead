#pragma once
// README.md of an export package (core/export): install, use (ModelNew, optimize, the functional
// form), what ships and what stays PyTorch with the reasons, the accelerated shapes, training (backward
// recomputes the original ops: not accelerated), the build's ABI, the figures from the project's
// stored results with their method ("not measured" where none is stored), and the command that
// reproduces the package. Text from the client's model is escaped for Markdown.
#include <string>

#include "core/export/export_plan.h"

namespace nova {

class PackageReadme {
 public:
  // `command`: the nova command line that wrote the package (the reproduction command).
  static std::string write(const ExportPlan& plan, const std::string& command);
  // `text` on one line with Markdown's special characters escaped.
  static std::string markdown_safe(const std::string& text);
};

}  // namespace nova
