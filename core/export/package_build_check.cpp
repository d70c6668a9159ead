#include "core/export/package_build_check.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "core/env/private_temp_dir.h"
#include "core/export/export_error.h"
#include "core/worker/child_process.h"

namespace nova {
namespace fs = std::filesystem;

fs::path PackageBuildCheck::nvcc(const fs::path& cuda_dir) {
  fs::path p = cuda_dir / "bin" / "nvcc";
  std::error_code ec;
  if (cuda_dir.empty() || !fs::is_regular_file(p, ec))
    throw ExportError(fmt::format("nvcc is not in {}: the package's kernels cannot be built here. Install the "
                                  "CUDA toolkit or set the toolkit folder in the settings",
                                  cuda_dir.empty() ? "the configured CUDA toolkit" : (cuda_dir / "bin").string()));
  return p;
}

std::vector<std::string> PackageBuildCheck::include_dirs(const std::string& python) {
  const std::string script =
      "import sysconfig\n"
      "from torch.utils.cpp_extension import include_paths\n"
      "for p in include_paths(device_type='cuda') + [sysconfig.get_paths()['include']]: print(p)\n";
  ProcessResult r;
  try {
    r = ChildProcess::run({python, "-c", script}, ChildProcess::minimal_env(), std::chrono::minutes(2));
  } catch (const std::exception& e) {
    throw ExportError(fmt::format("cannot run {} to find torch's include folders: {}", python, e.what()));
  }
  if (!(r.status.exited && r.status.code == 0))
    throw ExportError(fmt::format("{} could not name torch's include folders: {}", python, r.err));
  std::vector<std::string> dirs;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) dirs.push_back(line);
  return dirs;
}

void PackageBuildCheck::compile(const fs::path& package, const fs::path& nvcc, const std::vector<std::string>& includes,
                                const std::string& arch, const Progress& progress) {
  std::vector<fs::path> sources;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(package / "csrc", ec))
    if (e.path().extension() == ".cu" || e.path().extension() == ".cpp") sources.push_back(e.path());
  std::sort(sources.begin(), sources.end());
  PrivateTempDir objects("nova-export-build");
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const fs::path& src = sources[i];
    if (progress) progress(fmt::format("nvcc {} ({} of {})", src.filename().string(), i + 1, sources.size()));
    std::vector<std::string> argv = {nvcc.string(), "-c", src.string(), "-o",
                                     (objects.path() / (src.filename().string() + ".o")).string(),
                                     "-std=c++17", "-O3", "-Xcompiler", "-fPIC",
                                     "-DPy_LIMITED_API=0x03090000", "-DTORCH_EXTENSION_NAME=_C"};
    if (src.extension() == ".cu")
      for (const char* f : {"-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
                            "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__",
                            "--expt-relaxed-constexpr"})
        argv.push_back(f);
    argv.push_back(fmt::format("-gencode=arch=compute_{0},code=sm_{0}", arch));
    for (const auto& d : includes) argv.push_back("-I" + d);
    auto env = ChildProcess::minimal_env();
    env["PATH"] = (nvcc.parent_path().string()) + ":" + env["PATH"];
    ProcessResult r = ChildProcess::run(argv, env, std::chrono::minutes(15));
    if (r.timed_out) throw ExportError(fmt::format("nvcc took longer than 15 minutes on {}", src.filename().string()));
    if (!(r.status.exited && r.status.code == 0))
      throw ExportError(fmt::format("the package does not build: nvcc failed on csrc/{}:\n{}{}",
                                    src.filename().string(), r.out, r.err));
  }
}

}  // namespace nova
