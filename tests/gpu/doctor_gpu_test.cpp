// The first GPU test: `nova doctor` on a machine with a GPU lists it through the driver API,
// LibTorch and the worker's torch see it. Skips (with the reason) where no GPU exists.
#include <gtest/gtest.h>

#include "core/doctor/doctor_report.h"
#include "core/env/settings.h"

namespace nova {
namespace {

DoctorReport collect() {
  Settings s;
  return collect_doctor_report({s.resolved_python(), s.resolved_cuda_toolkit(), true});
}

TEST(DoctorGpu, ListsEachGpuThroughTheDriverApi) {
  DoctorReport r = collect();
  if (!r.has_gpu()) GTEST_SKIP() << "no CUDA device: " << r.driver_error;
  EXPECT_GT(r.driver_version, 0);
  for (const auto& g : r.gpus) {
    EXPECT_FALSE(g.name.empty());
    EXPECT_GE(g.cc_major, 7) << g.name;
    EXPECT_GT(g.sm_count, 0) << g.name;
    EXPECT_GT(g.memory_bytes, 1ull << 30) << g.name;
    EXPECT_GT(g.l2_bytes, 1 << 20) << g.name;
    EXPECT_GT(g.sm_clock_khz, 0) << g.name;
    EXPECT_FALSE(g.pci_bus_id.empty()) << g.name;
  }
  // NVRTC must be able to target the device's architecture (the fast build path).
  int arch = r.gpus[0].cc_major * 10 + r.gpus[0].cc_minor;
  EXPECT_NE(std::find(r.nvrtc_archs.begin(), r.nvrtc_archs.end(), arch), r.nvrtc_archs.end())
      << "NVRTC cannot compile for " << r.gpus[0].arch();
  std::cout << r.to_text();
}

TEST(DoctorGpu, LibTorchAndTheWorkerPythonSeeTheGpu) {
  DoctorReport r = collect();
  if (!r.has_gpu()) GTEST_SKIP() << "no CUDA device: " << r.driver_error;
  ASSERT_TRUE(r.python.ran) << r.python.error;
  ASSERT_TRUE(r.python.torch_ok) << r.python.torch_error;
  EXPECT_TRUE(r.python.cuda_available);
  EXPECT_EQ(r.python.cuda_devices.size(), r.gpus.size());
  if (r.libtorch_linked) {
    EXPECT_TRUE(r.libtorch_cuda);
    EXPECT_EQ(r.libtorch_devices, static_cast<int>(r.gpus.size()));
  }
  for (const auto& n : r.notes) ADD_FAILURE() << "unexpected note on a working GPU machine: " << n;
}

}  // namespace
}  // namespace nova
