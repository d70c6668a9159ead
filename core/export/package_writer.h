#pragma once
// Writes an export package (core/export) for an ExportPlan: the build files and C++ sources
// (PackageSources), package.json (PackageManifest), the README (PackageReadme), the client's model
// file and each shipped group's original PyTorch (its functional source), and the Python side, tests
// and benchmark from resources/export/ with the package's name filled in. Everything is written to a
// private temporary folder beside the output and moved into place at the end, so a failure or a
// cancel leaves nothing behind; an existing non-empty output folder is refused (ExportError).
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "core/export/export_plan.h"

namespace nova {

class PackageWriter {
 public:
  using Progress = std::function<void(const std::string& message)>;
  // Every file of the package: its path inside the package -> its text. Throws ExportError.
  static std::map<std::string, std::string> files(const ExportPlan& plan, const std::string& command);
  // Writes files(plan) into `out` (created; it must not exist or be an empty folder). Throws ExportError.
  // `check` (optional) runs on the complete package in its temporary folder before the move (a build
  // check); what it throws propagates and the temporary folder is removed.
  static void write(const ExportPlan& plan, const std::filesystem::path& out, const std::string& command,
                    const Progress& progress = {},
                    const std::function<void(const std::filesystem::path&)>& check = {});
  // resources/export/: the package's Python side, tests and benchmark, with @PACKAGE@ placeholders.
  static std::filesystem::path templates_dir();
};

}  // namespace nova
