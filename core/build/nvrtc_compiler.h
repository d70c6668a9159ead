#pragma once
// The fast build path: compiles a candidate's device code in-process with NVRTC to a cubin for
// the GPU's architecture (sm_90 on an H200; no GPU is needed to compile), cached on disk by the
// exact source, options, architecture and NVRTC version, so an unchanged kernel never compiles
// twice.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace nova {

struct NvrtcResult {
  bool ok = false;
  std::string cubin;  // the compiled image (binary)
  std::string log;    // NVRTC's log, warnings included
  bool cache_hit = false;
  double compile_ms = 0;             // 0 on a cache hit
  std::filesystem::path cubin_path;  // where the cached cubin lies
  std::string arch;                  // "sm_90"
};

class NvrtcCompiler {
 public:
  // `cache_dir` empty: ~/.cache/nova/nvrtc ($NOVA_CACHE overrides ~/.cache/nova).
  explicit NvrtcCompiler(std::filesystem::path cache_dir = {});

  // Compiles `source` (file name `name` in diagnostics) for `arch` ("sm_90"). Headers are found
  // in kernels/ (the generator's shared device headers) and the CUDA toolkit's include folder.
  NvrtcResult compile(const std::string& source, const std::string& name, const std::string& arch,
                      const std::vector<std::string>& extra_options = {}) const;

  const std::filesystem::path& cache_dir() const { return cache_dir_; }
  static std::string nvrtc_version();

 private:
  std::filesystem::path cache_dir_;
};

}  // namespace nova
