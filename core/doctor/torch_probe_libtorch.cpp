// libnova_torch_probe.so: the one translation unit that includes LibTorch headers. Core loads it
// with dlopen (see core/CMakeLists.txt for why it is not linked in) and calls the C entry point.
#include <cstdio>
#include <cstring>

#include <torch/cuda.h>
#include <torch/version.h>

extern "C" __attribute__((visibility("default"))) int nova_torch_probe(char* version, int version_len,
                                                                       int* cuda_available, int* devices) {
  std::snprintf(version, static_cast<size_t>(version_len), "%s", TORCH_VERSION);
  try {
    *cuda_available = torch::cuda::is_available() ? 1 : 0;
    *devices = static_cast<int>(torch::cuda::device_count());
  } catch (...) {
    *cuda_available = 0;
    *devices = 0;
  }
  return 0;
}
