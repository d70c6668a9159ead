#pragma once
// Builds and installs an exported package into a private folder, for the whole-model check: `python
// -m pip install --no-build-isolation --no-deps --no-index --target <cache>/<hash>/site <package>`
// (no network, nothing installed into the user's environment). The folder is named by a hash of the
// package's files, so the same package is built once; an install that fails or is cancelled leaves
// no folder behind. The worker then imports the package from that folder.
#include <filesystem>
#include <functional>
#include <string>

namespace nova {

class PackageInstaller {
 public:
  using Progress = std::function<void(const std::string& message)>;
  using Cancelled = std::function<bool()>;
  // The hash of the package's own files (setup.py, pyproject.toml, the Python package, csrc/),
  // ignoring what a build leaves in the folder (build/, *.egg-info, __pycache__, compiled objects).
  static std::string content_hash(const std::filesystem::path& package);
  // Installs (or finds already installed) `package` under `cache`; returns the site folder to put on
  // the worker's path. Throws std::runtime_error with pip's last lines when the build fails, and when
  // cancelled.
  static std::filesystem::path install(const std::filesystem::path& package, const std::filesystem::path& cache,
                                       const std::string& python, const Progress& progress = {},
                                       const Cancelled& cancelled = {});
};

}  // namespace nova
