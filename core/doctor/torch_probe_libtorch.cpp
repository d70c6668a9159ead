// The one translation unit of nova_core that includes LibTorch headers (compile time matters:
// keep torch includes out of everything else). Compiled only when CMake found LibTorch.
#include <torch/cuda.h>
#include <torch/version.h>

#include "core/doctor/doctor_report.h"

namespace nova {

void probe_libtorch(DoctorReport& report) {
  report.libtorch_linked = true;
  report.libtorch_version = TORCH_VERSION;
  try {
    report.libtorch_cuda = torch::cuda::is_available();
    report.libtorch_devices = static_cast<int>(torch::cuda::device_count());
  } catch (const std::exception&) {
    report.libtorch_cuda = false;
  }
}

}  // namespace nova
