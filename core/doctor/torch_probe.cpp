// Loads libnova_torch_probe.so (built when CMake found LibTorch) and asks it for LibTorch's
// version and CUDA devices. RTLD_LOCAL keeps torch's exported libstdc++ copies away from ours.
#include <dlfcn.h>

#include <filesystem>

#include "core/doctor/doctor_report.h"
#include "core/env/resource_paths.h"

namespace nova {

void probe_libtorch(DoctorReport& report) {
  std::vector<std::filesystem::path> candidates = {plugin_dir() / "libnova_torch_probe.so"};
  void* lib = nullptr;
  std::string errors;
  for (const auto& c : candidates) {
    std::error_code ec;
    if (!std::filesystem::exists(c, ec)) continue;
    lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    if (const char* e = dlerror()) errors += e;
  }
  if (!lib) {
    report.libtorch_linked = false;
    report.libtorch_version = errors.empty() ? "libnova_torch_probe.so is not in " + plugin_dir().string() : errors;
    return;
  }
  using Probe = int (*)(char*, int, int*, int*);
  auto probe = reinterpret_cast<Probe>(dlsym(lib, "nova_torch_probe"));
  if (!probe) return;
  char version[64] = {};
  int cuda = 0, devices = 0;
  probe(version, sizeof version, &cuda, &devices);
  report.libtorch_linked = true;
  report.libtorch_version = version;
  report.libtorch_cuda = cuda != 0;
  report.libtorch_devices = devices;
  // The library stays loaded: unloading torch's CUDA state at exit is not worth the risk.
}

}  // namespace nova
