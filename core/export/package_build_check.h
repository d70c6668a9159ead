#pragma once
// Compiles an export package's C++ and CUDA sources (csrc/) with nvcc, object files only, for one
// architecture, with the flags torch.utils.cpp_extension uses for a CUDAExtension, against the torch
// of a Python interpreter: the check that the package builds, without installing it. Used by
// `nova export --check-build` (before the package is moved into place) and by CI (sm_90, no GPU).
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace nova {

class PackageBuildCheck {
 public:
  using Progress = std::function<void(const std::string& message)>;
  // <cuda_dir>/bin/nvcc; throws ExportError naming the folder when it is not there.
  static std::filesystem::path nvcc(const std::filesystem::path& cuda_dir);
  // The include folders a torch extension compiles with (torch's and Python's), from `python`.
  // Throws ExportError when the interpreter or its torch cannot say.
  static std::vector<std::string> include_dirs(const std::string& python);
  // Compiles every csrc/*.cpp and csrc/*.cu of `package` into a temporary folder for `arch` ("90");
  // throws ExportError with nvcc's messages at the first failure.
  static void compile(const std::filesystem::path& package, const std::filesystem::path& nvcc,
                      const std::vector<std::string>& include_dirs, const std::string& arch,
                      const Progress& progress = {});
};

}  // namespace nova
