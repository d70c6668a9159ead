#include "core/build/nvrtc_compiler.h"
#include "core/env/build_info.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <nvrtc.h>

#include "core/env/atomic_file.h"
#include "core/env/fnv1a.h"
#include "core/env/resource_paths.h"

namespace nova {
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A cache that cannot be written is only slower.
void write_cache_file(const fs::path& p, const std::string& data) {
  try {
    write_file_atomically(p, data);  // a unique temporary per call: compiles run on several threads
  } catch (const std::runtime_error&) {
  }
}

// A digest of every header a source may include from kernels/ (path and content): a cubin built
// against other headers is another output. Read once per process (the headers ship with nova).
const std::string& headers_digest() {
  static const std::string digest = [] {
    std::vector<fs::path> headers;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(kernels_dir(), ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec)) headers.push_back(it->path());
    std::sort(headers.begin(), headers.end());
    std::string all;
    for (const auto& h : headers) all += h.lexically_relative(kernels_dir()).string() + "\n" + read_file(h) + "\n";
    return fmt::format("{:016x} ({} files)", fnv1a64(all), headers.size());
  }();
  return digest;
}

}  // namespace

NvrtcCompiler::NvrtcCompiler(fs::path cache_dir) : cache_dir_(std::move(cache_dir)) {
  if (cache_dir_.empty()) cache_dir_ = nova::cache_dir() / "nvrtc";
}

std::string NvrtcCompiler::nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

NvrtcResult NvrtcCompiler::compile(const std::string& source, const std::string& name,
                                   const std::string& arch,
                                   const std::vector<std::string>& extra_options) const {
  NvrtcResult r;
  r.arch = arch;
  std::vector<std::string> options = {
      "--gpu-architecture=" + arch,
      "--std=c++17",
      "-default-device",
      "--include-path=" + kernels_dir().string(),
      "--include-path=" + std::string(build_info::cuda_toolkit_dir()) + "/include",
  };
  options.insert(options.end(), extra_options.begin(), extra_options.end());

  // The key holds everything that decides the output; a hit needs the stored key to match exactly.
  std::string key = "nvrtc " + nvrtc_version() + "\nheaders " + headers_digest() + "\n";
  for (const auto& o : options) key += o + "\n";
  key += "--\n" + source;
  std::string stem = fmt::format("{:016x}-{}", fnv1a64(key), arch);
  fs::path cubin_path = cache_dir_ / (stem + ".cubin");
  fs::path key_path = cache_dir_ / (stem + ".key");
  r.cubin_path = cubin_path;
  std::error_code ec;
  if (fs::exists(cubin_path, ec) && fs::exists(key_path, ec) && read_file(key_path) == key) {
    r.cubin = read_file(cubin_path);
    r.ok = !r.cubin.empty();
    r.cache_hit = r.ok;
    if (r.ok) return r;
  }

  auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    r.log = "nvrtcCreateProgram failed";
    return r;
  }
  std::vector<const char*> copts;
  for (const auto& o : options) copts.push_back(o.c_str());
  nvrtcResult res = nvrtcCompileProgram(prog, static_cast<int>(copts.size()), copts.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  if (log_size > 1) {
    r.log.resize(log_size);
    nvrtcGetProgramLog(prog, r.log.data());
    r.log.resize(log_size - 1);
  }
  if (res == NVRTC_SUCCESS) {
    size_t cubin_size = 0;
    if (nvrtcGetCUBINSize(prog, &cubin_size) == NVRTC_SUCCESS && cubin_size > 0) {
      r.cubin.resize(cubin_size);
      nvrtcGetCUBIN(prog, r.cubin.data());
      r.ok = true;
    } else {
      r.log += "\nNVRTC produced no cubin (is the architecture a real one, e.g. sm_90?)";
    }
  } else if (r.log.empty()) {
    r.log = nvrtcGetErrorString(res);
  }
  nvrtcDestroyProgram(&prog);
  r.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (r.ok) {
    fs::create_directories(cache_dir_, ec);
    write_cache_file(cubin_path, r.cubin);
    write_cache_file(key_path, key);
  }
  return r;
}

}  // namespace nova
