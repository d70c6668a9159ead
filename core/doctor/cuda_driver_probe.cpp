// Reads GPUs through the CUDA driver API, loaded at run time: a machine without a driver
// (CI, a laptop) still runs nova, and the report says why there is no GPU.
#include <dlfcn.h>

#include <fmt/format.h>

#include "core/doctor/doctor_report.h"

namespace nova {
namespace {

// Values from cuda.h's CUdevice_attribute (stable across releases).
enum : int {
  kAttrMaxClockRate = 13,
  kAttrMultiprocessorCount = 16,
  kAttrMemoryClockRate = 36,
  kAttrGlobalMemoryBusWidth = 37,
  kAttrL2CacheSize = 38,
  kAttrComputeCapabilityMajor = 75,
  kAttrComputeCapabilityMinor = 76,
};

using CUresult = int;
using CUdevice = int;

struct DriverApi {
  void* lib = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*cuDeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;

  template <typename F>
  bool sym(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
  }
  std::string error(CUresult r) const {
    const char* s = nullptr;
    if (cuGetErrorString && cuGetErrorString(r, &s) == 0 && s) return fmt::format("{} ({})", s, r);
    return fmt::format("CUDA driver error {}", r);
  }
};

}  // namespace

void probe_cuda_driver(DoctorReport& report) {
  DriverApi api;
  api.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api.lib) {
    report.driver_error = "no NVIDIA driver: libcuda.so.1 was not found";
    return;
  }
  report.driver_loaded = true;
  bool ok = api.sym(api.cuInit, "cuInit") && api.sym(api.cuDriverGetVersion, "cuDriverGetVersion") &&
            api.sym(api.cuDeviceGetCount, "cuDeviceGetCount") && api.sym(api.cuDeviceGet, "cuDeviceGet") &&
            api.sym(api.cuDeviceGetName, "cuDeviceGetName") &&
            api.sym(api.cuDeviceGetAttribute, "cuDeviceGetAttribute") &&
            api.sym(api.cuDeviceTotalMem, "cuDeviceTotalMem_v2") &&
            api.sym(api.cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId");
  api.sym(api.cuGetErrorString, "cuGetErrorString");
  if (!ok) {
    report.driver_error = "libcuda.so.1 lacks driver API entry points (driver too old?)";
    return;
  }
  api.cuDriverGetVersion(&report.driver_version);
  if (CUresult r = api.cuInit(0); r != 0) {
    report.driver_error = "cuInit failed: " + api.error(r);
    return;
  }
  int count = 0;
  if (CUresult r = api.cuDeviceGetCount(&count); r != 0) {
    report.driver_error = "cuDeviceGetCount failed: " + api.error(r);
    return;
  }
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    if (api.cuDeviceGet(&dev, i) != 0) continue;
    GpuInfo g;
    g.index = i;
    char name[256] = {};
    api.cuDeviceGetName(name, sizeof name, dev);
    g.name = name;
    auto attr = [&](int a) {
      int v = 0;
      api.cuDeviceGetAttribute(&v, a, dev);
      return v;
    };
    g.cc_major = attr(kAttrComputeCapabilityMajor);
    g.cc_minor = attr(kAttrComputeCapabilityMinor);
    g.sm_count = attr(kAttrMultiprocessorCount);
    g.l2_bytes = attr(kAttrL2CacheSize);
    g.sm_clock_khz = attr(kAttrMaxClockRate);
    g.memory_clock_khz = attr(kAttrMemoryClockRate);
    g.memory_bus_bits = attr(kAttrGlobalMemoryBusWidth);
    size_t mem = 0;
    api.cuDeviceTotalMem(&mem, dev);
    g.memory_bytes = mem;
    char bus[64] = {};
    api.cuDeviceGetPCIBusId(bus, sizeof bus, dev);
    g.pci_bus_id = bus;
    report.gpus.push_back(std::move(g));
  }
  if (count == 0) report.driver_error = "the driver is loaded but reports no CUDA device";
}

}  // namespace nova
